// A reader (see js/readers.js) over a file on disk.
import fs from 'node:fs';
import { LoadError } from '../errors.js';

export async function openFileReader(path) {
  let handle;
  try {
    handle = await fs.promises.open(path, 'r');
    const { size } = await handle.stat();
    let position = 0;
    return {
      size,
      async read(dst) {
        try {
          const { bytesRead } = await handle.read(dst, 0, dst.length, position);
          position += bytesRead;
          return bytesRead;
        } catch (error) {
          throw readError(path, error);  // e.g. EISDIR: the path is a folder
        }
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle?.close();
    throw readError(path, error);
  }
}

function readError(path, error) {
  return new LoadError(`cannot read '${path}': ${error.message}`, {
    code: error.code === 'ENOENT' ? 'not_found' : 'io',
    cause: error,
  });
}
