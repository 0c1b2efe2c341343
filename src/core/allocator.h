// The CPU allocator's internals that other parts of the library read (the public side is in
// ember/storage.h).
#pragma once
#include <cstddef>

namespace ember::cpu_allocator {

// The bytes of the block allocate(nbytes) hands out: its size class, as Stats and the memory
// observer count it.
size_t block_bytes(size_t nbytes);

}  // namespace ember::cpu_allocator
