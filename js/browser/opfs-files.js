// Reading and writing one OPFS file from a worker. A sync access handle is the
// fastest way to move model bytes in and out of the origin private file system
// (docs/performance.md). Where the browser has OPFS but no working sync access
// handles (WebKitGTK rejects createSyncAccessHandle with NotSupportedError),
// files are written through writable streams and read as Files.
import { blobReader } from '../readers.js';

// OPFS reads land in this plain buffer and are then copied into the
// destination: faster than reading straight into a shared wasm heap.
const READ_BUFFER_BYTES = 8 << 20;

let syncAccessWorks = null;  // Promise<boolean>, once asked

// Whether sync access handles work in this context, tried once on a scratch
// file in `dir` (named like a partial download, so LLM.cache.clear() removes
// it should it stay). Never tried on a file that matters: once WebKitGTK has
// refused a sync access handle for a file, that name cannot be opened for
// writing again (InvalidStateError), even after the file is removed.
export function canUseSyncAccess(dir, scratchName) {
  syncAccessWorks ??= trySyncAccess(dir, scratchName);
  return syncAccessWorks;
}

async function trySyncAccess(dir, scratchName) {
  if (typeof globalThis.FileSystemFileHandle?.prototype.createSyncAccessHandle !== 'function') return false;
  try {
    const access = await (await dir.getFileHandle(scratchName, { create: true })).createSyncAccessHandle();
    access.close();
    return true;
  } catch {
    return false;
  } finally {
    await dir.removeEntry(scratchName).catch(() => {});
  }
}

// A reader (js/readers.js) over `fileHandle`; syncAccess: from canUseSyncAccess.
// Several readers of one file may exist at once (read-only handles share the
// file); where read-only handles are not supported and the file is busy, it
// is read as a File instead.
export async function openOpfsReader(fileHandle, syncAccess) {
  let access;
  try {
    if (!syncAccess) throw new Error('no sync access handles');
    access = await fileHandle.createSyncAccessHandle({ mode: 'read-only' });
  } catch {
    return blobReader(await fileHandle.getFile());
  }
  const size = access.getSize();
  let buffer = null;
  let position = 0;
  return {
    size,
    async read(dst) {
      buffer ??= new Uint8Array(Math.min(READ_BUFFER_BYTES, size));
      const want = Math.min(dst.length, buffer.length, size - position);
      if (want <= 0) return 0;
      const n = access.read(buffer.subarray(0, want), { at: position });
      dst.set(buffer.subarray(0, n));
      position += n;
      return n;
    },
    close: async () => access.close(),
  };
}

// Writes bytes in order to `fileHandle`, replacing what it held;
// syncAccess: from canUseSyncAccess. { write(bytes) → Promise, close() →
// Promise (the bytes are in the file once it resolves), abort() → Promise
// (stops writing, at any point; what the file then holds is undefined, so
// the caller removes it) }.
export async function openOpfsWriter(fileHandle, syncAccess) {
  if (!syncAccess) return streamWriter(await fileHandle.createWritable());
  const access = await fileHandle.createSyncAccessHandle();
  access.truncate(0);
  let position = 0;
  return {
    async write(bytes) {
      position += access.write(bytes, { at: position });
    },
    async close() {
      access.flush();
      access.close();
    },
    async abort() {
      access.close();
    },
  };
}

// The writer over a writable stream, which keeps what it is given until it
// writes it and refuses views of shared memory (the threaded build's wasm
// heap): every write hands it a copy.
function streamWriter(writable) {
  return {
    write: (bytes) => writable.write(bytes.slice()),
    close: () => writable.close(),
    abort: () => writable.abort(),
  };
}

// Writes a small text file whole.
export async function writeOpfsText(fileHandle, text, syncAccess) {
  const writer = await openOpfsWriter(fileHandle, syncAccess);
  try {
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
  } catch (error) {
    await writer.abort().catch(() => {});
    throw error;
  }
}
