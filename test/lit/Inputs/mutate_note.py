# Writes damaged copies of a code object's AMDGPU metadata note (msgpack):
# wrong node kinds where moegen reads a map, an array or a string, and byte
# flips. Usage: mutate_note.py FILE.hsaco OUT_PREFIX
import sys, struct, random
src, prefix = sys.argv[1], sys.argv[2]
b = bytearray(open(src, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum = struct.unpack_from('<HH', b, 0x3a)
desc = None
for i in range(shnum):
    o = shoff + i * shentsize
    sh_type, = struct.unpack_from('<I', b, o + 4)
    off, size = struct.unpack_from('<QQ', b, o + 0x18)
    if sh_type == 7:
        namesz, descsz, typ = struct.unpack_from('<III', b, off)
        dstart = off + 12 + ((namesz + 3) // 4) * 4
        desc = (dstart, descsz)
start, n = desc
def save(name, data):
    open(prefix + name + '.hsaco', 'wb').write(data)
m = bytearray(b); m[start] = 0x01; save('root_not_map', m)
def swapkeys(a, c):
    m = bytearray(b); blob = bytes(m[start:start+n])
    ia, ic = blob.find(a), blob.find(c)
    assert ia >= 0 and ic >= 0, (a, c)
    m[start+ia:start+ia+len(a)] = c; m[start+ic:start+ic+len(c)] = a
    return m
save('kernels_is_version', swapkeys(b'amdhsa.kernels', b'amdhsa.version'))
m = bytearray(b); blob = bytes(m[start:start+n]); i = blob.find(b'.name'); m[start+i+4] = ord('_')
j = blob.find(b'.args'); m[start+j:start+j+5] = b'.name'; save('name_is_array', m)
m = bytearray(b); blob = bytes(m[start:start+n]); i = blob.find(b'amdhsa.target')
m[start+i+len('amdhsa.target')] = 0xc3; save('target_not_string', m)
for seed in range(3):
    r = random.Random(seed); m = bytearray(b)
    for _ in range(8):
        m[start + r.randrange(n)] = r.randrange(256)
    save('flip%d' % seed, m)
