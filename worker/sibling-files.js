// Files beside a model's file, found by name: the other files of a split
// GGUF model, and a llama2.c checkpoint's tokenizer file. Only sources with
// a place have neighbours: a URL (same folder, same query) and a file path;
// bytes, Blobs and streams do not.
import { LoadError } from '../js/errors.js';

// The description of a file named `name` in the folder of `source` (a
// source description, js/sources.js), or null if the source has no folder.
export function besideSource(source, name) {
  if (source.kind === 'url') return { ...source, url: new URL(name, source.url).href };
  if (source.kind === 'path') {
    const folderEnd = Math.max(source.path.lastIndexOf('/'), source.path.lastIndexOf('\\')) + 1;
    return { ...source, path: source.path.slice(0, folderEnd) + name };
  }
  return null;
}

// The description of file `index` (from 0) of a split model of `count`
// files whose first is `source`. splitFileName(firstName, index, count) is
// the engine's naming (gguf-split's: NAME-00001-of-00003.gguf), "" when the
// name is not that of a first file.
export function splitFileSource(source, index, count, splitFileName) {
  const first = `NAME-00001-of-${String(count).padStart(5, '0')}.gguf`;
  const cannot = (why) => new LoadError(
    `the model is split into ${count} files and ${why}, so the others cannot be found: load it from the URL or ` +
      `the path of its first file, ${first}, with the others beside it`,
    { code: 'invalid_argument' },
  );
  if (source.kind === 'url') {
    const url = new URL(source.url);
    const name = splitFileName(url.pathname, index, count);
    if (!name) throw cannot(`the URL's file name '${url.pathname.split('/').pop()}' is not that of its first file`);
    url.pathname = name;
    return { ...source, url: url.href };
  }
  if (source.kind === 'path') {
    const name = splitFileName(source.path, index, count);
    if (!name) throw cannot(`the file name of '${source.path}' is not that of its first file`);
    return { ...source, path: name };
  }
  throw cannot(`it came as ${source.kind === 'blob' ? 'a Blob' : 'bytes or a stream'}`);
}
