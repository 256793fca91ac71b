// Reading and writing one OPFS file from a worker with a sync access handle:
// the fastest way to move model bytes in and out of the origin private file
// system (toolchain.md: ~400 MB/s writing, several GB/s reading).
import { blobReader } from '../readers.js';

// OPFS reads land in this plain buffer and are then copied into the
// destination: faster than reading straight into a shared wasm heap.
const READ_BUFFER_BYTES = 8 << 20;

// A reader (js/readers.js) over `fileHandle`. Several readers of one file may
// exist at once (read-only handles share the file); where read-only handles
// are not supported and the file is busy, it is read as a File instead.
export async function openOpfsReader(fileHandle) {
  let access;
  try {
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

// Writes bytes in order to `fileHandle` (truncated first); close() flushes.
export async function openOpfsWriter(fileHandle) {
  const access = await fileHandle.createSyncAccessHandle();
  access.truncate(0);
  let position = 0;
  let open = true;
  return {
    write(bytes) {
      position += access.write(bytes, { at: position });
    },
    close() {
      if (!open) return;
      open = false;
      access.flush();
      access.close();
    },
  };
}

// Writes a small text file whole.
export async function writeOpfsText(fileHandle, text) {
  const writer = await openOpfsWriter(fileHandle);
  try {
    writer.write(new TextEncoder().encode(text));
  } finally {
    writer.close();
  }
}
