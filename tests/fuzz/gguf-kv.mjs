// Reads and writes the key-value section of GGUF files, for building fuzz
// seeds: the chat templates of the vocab files, small vocabularies cut from
// real ones, models with optional keys added. The tensors (infos and data)
// are carried over as they are. Layout: cpp/gguf/gguf.h.
import { readFileSync, writeFileSync } from 'node:fs';

const kString = 8;
const kArray = 9;
// Scalar value types: [size, read, write] for each GGUF type id.
const scalars = {
  0: [1, (b, at) => b.readUInt8(at), (b, v, at) => b.writeUInt8(v, at)],
  1: [1, (b, at) => b.readInt8(at), (b, v, at) => b.writeInt8(v, at)],
  2: [2, (b, at) => b.readUInt16LE(at), (b, v, at) => b.writeUInt16LE(v, at)],
  3: [2, (b, at) => b.readInt16LE(at), (b, v, at) => b.writeInt16LE(v, at)],
  4: [4, (b, at) => b.readUInt32LE(at), (b, v, at) => b.writeUInt32LE(v, at)],
  5: [4, (b, at) => b.readInt32LE(at), (b, v, at) => b.writeInt32LE(v, at)],
  6: [4, (b, at) => b.readFloatLE(at), (b, v, at) => b.writeFloatLE(v, at)],
  7: [1, (b, at) => b.readUInt8(at) !== 0, (b, v, at) => b.writeUInt8(v ? 1 : 0, at)],
  10: [8, (b, at) => b.readBigUInt64LE(at), (b, v, at) => b.writeBigUInt64LE(BigInt(v), at)],
  11: [8, (b, at) => b.readBigInt64LE(at), (b, v, at) => b.writeBigInt64LE(BigInt(v), at)],
  12: [8, (b, at) => b.readDoubleLE(at), (b, v, at) => b.writeDoubleLE(v, at)],
};

// The key-value pairs of a GGUF file, [{key, type, value}] (an array's value
// is {elemType, items}); `tensors` is the rest of the file: the tensor count,
// the tensor infos and the data.
export function readGguf(path) {
  const buf = readFileSync(path);
  let at = 0;
  const u32 = () => { const v = buf.readUInt32LE(at); at += 4; return v; };
  const u64 = () => { const v = Number(buf.readBigUInt64LE(at)); at += 8; return v; };
  const str = () => { const n = u64(); const s = buf.toString('utf8', at, at + n); at += n; return s; };
  const value = (type) => {
    if (type === kString) return str();
    const [size, read] = scalars[type] ?? [];
    if (!read) throw new Error(`${path}: GGUF value type ${type} at byte ${at}`);
    const v = read(buf, at);
    at += size;
    return v;
  };
  if (buf.toString('latin1', 0, 4) !== 'GGUF') throw new Error(`${path} is not a GGUF file`);
  at = 8;
  const nTensors = u64();
  const kvs = [];
  for (let n = u64(); n > 0; --n) {
    const key = str();
    const type = u32();
    if (type === kArray) {
      const elemType = u32();
      const items = [];
      for (let count = u64(); count > 0; --count) items.push(value(elemType));
      kvs.push({ key, type, value: { elemType, items } });
    } else {
      kvs.push({ key, type, value: value(type) });
    }
  }
  const infoStart = at;
  for (let n = nTensors; n > 0; --n) {
    str();  // name
    const nDims = u32();
    at += 8 * nDims + 4 + 8;  // dims, type, offset
  }
  const alignment = kvs.find((kv) => kv.key === 'general.alignment')?.value ?? 32;
  const dataStart = Math.ceil(at / alignment) * alignment;
  const tensors = { count: nTensors, infos: buf.subarray(infoStart, at), data: buf.subarray(dataStart) };
  return { kvs, tensors };
}

// Writes a GGUF v3 file with `kvs` (as readGguf gives them) and `tensors`
// (from readGguf; none by default).
export function writeGguf(path, kvs, tensors = { count: 0, infos: Buffer.alloc(0), data: Buffer.alloc(0) }) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { const b = Buffer.from(s, 'utf8'); u64(b.length); parts.push(b); };
  const value = (type, v) => {
    if (type === kString) return str(v);
    const [size, , write] = scalars[type];
    const b = Buffer.alloc(size);
    write(b, v, 0);
    parts.push(b);
  };
  parts.push(Buffer.from('GGUF', 'latin1'));
  u32(3);
  u64(tensors.count);
  u64(kvs.length);
  for (const { key, type, value: v } of kvs) {
    str(key);
    u32(type);
    if (type === kArray) {
      u32(v.elemType);
      u64(v.items.length);
      for (const item of v.items) value(v.elemType, item);
    } else {
      value(type, v);
    }
  }
  parts.push(tensors.infos);
  if (tensors.count > 0) {
    const size = parts.reduce((n, b) => n + b.length, 0);
    const alignment = kvs.find((kv) => kv.key === 'general.alignment')?.value ?? 32;
    parts.push(Buffer.alloc(Math.ceil(size / alignment) * alignment - size), tensors.data);
  }
  writeFileSync(path, Buffer.concat(parts));
}
