// Whether this context can run the threaded (pthreads) build: it needs
// SharedArrayBuffer and a shared WebAssembly.Memory. Browsers give them only
// to cross-origin isolated pages, and not every such page has them (WebKitGTK
// reports crossOriginIsolated without SharedArrayBuffer). The page asks to
// pick the build; the engine worker asks again, as what it has may differ.
export function canRunThreads() {
  if (globalThis.crossOriginIsolated !== true || typeof SharedArrayBuffer !== 'function') return false;
  try {
    return new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }).buffer instanceof SharedArrayBuffer;
  } catch {
    return false;
  }
}
