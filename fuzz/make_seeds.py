# Writes small seed inputs for the fuzz targets into <dir>/safetensors and <dir>/checkpoint
# (generated at test time so that no binary file is committed).
import collections, json, os, struct, sys

out = sys.argv[1]
for d in ('safetensors', 'checkpoint', 'fx_graph'):
    os.makedirs(os.path.join(out, d), exist_ok=True)

def safetensors(name, tensors, metadata=None):
    header, blob = {}, b''
    for k, (dtype, shape, data) in tensors.items():
        header[k] = {'dtype': dtype, 'shape': shape, 'data_offsets': [len(blob), len(blob) + len(data)]}
        blob += data
    if metadata:
        header['__metadata__'] = metadata
    h = json.dumps(header).encode()
    with open(os.path.join(out, 'safetensors', name), 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + blob)

safetensors('one', {'w': ('F32', [2], struct.pack('<2f', 1.5, -2))})
safetensors('many', {'a': ('BOOL', [3], b'\x01\x00\x01'), 'b': ('I64', [1, 1], struct.pack('<q', 7)),
                     'e': ('F16', [0, 4], b''), 's': ('BF16', [], b'\x80\x3f'),
                     'u\u00e9': ('U8', [2], b'\x00\xff')}, {'format': 'pt', 'k': 'a\\"b'})

# A graph as fx::save writes it: relu(x @ w.t() + b) with a tuple output.
graph = {'version': 1,
         'attributes': [{'name': 'fc.weight', 'dtype': 'F32', 'shape': [4, 3], 'parameter': True}],
         'nodes': [{'name': 'x', 'op': 'placeholder', 'target': 'x', 'args': [], 'kwargs': []},
                   {'name': 'fc_weight', 'op': 'get_attr', 'target': 'fc.weight', 'args': [], 'kwargs': []},
                   {'name': 'linear', 'op': 'call_function', 'target': 'linear',
                    'args': [{'node': 'x'}, {'node': 'fc_weight'}, None], 'kwargs': []},
                   {'name': 'add', 'op': 'call_function', 'target': 'add',
                    'args': [{'node': 'linear'}, {'float': '0.5'}], 'kwargs': [['alpha', {'int': '1'}]]},
                   {'name': 'cat', 'op': 'call_function', 'target': 'cat',
                    'args': [{'list': [{'node': 'add'}, {'node': 'x'}]}, {'int': '1'}], 'kwargs': []},
                   {'name': 'view', 'op': 'call_function', 'target': 'view',
                    'args': [{'node': 'cat'}, {'values': [{'int': '-1'}]}], 'kwargs': []},
                   {'name': 'output', 'op': 'output', 'target': 'output',
                    'args': [{'tuple': [{'node': 'view'}, {'str': 'done'}, True]}], 'kwargs': []}]}
with open(os.path.join(out, 'fx_graph', 'graph.json'), 'w') as f:
    json.dump(graph, f)

try:
    import torch
except ImportError:
    sys.exit('fuzz seeds: python3 cannot import torch (install python3-torch: scripts/install-deps.sh)')
torch.manual_seed(0)
base = torch.arange(6, dtype=torch.float32).reshape(2, 3)
torch.save(collections.OrderedDict([('w', base), ('t', base.t()), ('row', base[1])]),
           os.path.join(out, 'checkpoint', 'views.pt'))
lin = torch.nn.Linear(2, 1)
lin.register_buffer('n', torch.tensor(3))
torch.save({'model': lin.state_dict(), 'b': [torch.tensor([True]), torch.zeros(0, dtype=torch.float64)],
            'h': torch.ones(1).bfloat16(), 'epoch': 2, 'p': torch.nn.Parameter(torch.ones(1))},
           os.path.join(out, 'checkpoint', 'nested.pt'))
