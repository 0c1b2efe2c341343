// A tour of Ember's tensor core, written as a libtorch program would be.
#include <ember/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::Tensor x = torch::rand({2, 3});
  torch::Tensor y = torch::ones({3}, torch::kFloat32);
  torch::Tensor z = x + y * 2;  // broadcasting
  std::cout << "x =\n" << x << "\nx + 2 * ones(3) =\n" << z << '\n';

  torch::Tensor img = torch::randn({1, 3, 4, 4}).contiguous(torch::MemoryFormat::ChannelsLast);
  torch::Tensor out = img * 0.5;  // pointwise ops keep channels_last
  std::cout << "channels_last kept: " << out.is_contiguous(torch::MemoryFormat::ChannelsLast) << '\n';

  torch::Tensor h = torch::arange(6).view({2, 3}).t();  // views share storage
  std::cout << "arange(6).view({2, 3}).t() =\n" << h << '\n';
  try {
    torch::ones({2, 3}) + torch::ones({4});
  } catch (const ember::Error& e) {
    std::cout << "error: " << e.what() << '\n';
  }
  return 0;
}
