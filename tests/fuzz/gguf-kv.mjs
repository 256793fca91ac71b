// Reads and writes the key-value section of GGUF files, for building fuzz
// seeds: the chat templates of the vocab files, and small vocabularies cut
// from real ones. Files written here have no tensors (like llama.cpp's
// vocab-only files). Layout: cpp/gguf/gguf.h.
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

// [{key, type, value}] of a GGUF file; an array's value is {elemType, items}.
export function readGgufKvs(path) {
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
  u64();  // tensor count
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
  return kvs;
}

// Writes a GGUF v3 file with `kvs` (as readGgufKvs gives them) and no tensors.
export function writeGgufKvs(path, kvs) {
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
  u64(0);
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
  writeFileSync(path, Buffer.concat(parts));
}
