// Where a model comes from: a preset (the package's registry, plus local
// copies when the server has a models folder), a URL typed in, or a local
// file (file picker or drag-and-drop). Every choice is reported as
// onPick(source, label): source goes to LLM.load, label names it in messages.
import { MODELS } from '../js/browser.js';
import { formatBytes } from './format.js';

// tools/serve.mjs names its models folder (../shared/models, at /models/)
// in this header on every response; other hosts send none.
const MODELS_HEADER = 'X-Wasm-Llm-Models';

export class ModelPicker {
  constructor({ presetForm, preset, urlForm, url, file, dropZone }, onPick) {
    this.elements = { presetForm, preset, urlForm, url, file, dropZone };
    this.presets = [];
    presetForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const chosen = this.presets[preset.selectedIndex];
      if (chosen) onPick(chosen.source, chosen.name);
    });
    urlForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = url.value.trim();
      if (text) onPick(text, fileNameOf(text));
    });
    file.addEventListener('change', () => {
      const [chosen] = file.files;
      if (chosen) onPick(chosen, chosen.name);
      file.value = '';  // picking the same file again is a new load
    });
    this.#acceptDrops((dropped) => onPick(dropped, dropped.name));
  }

  // Fills the preset list: local copies first (no download), then the registry.
  async init() {
    const folder = await localModelsFolder();
    const local = folder
      ? await Promise.all(Object.entries(MODELS).map(([name, entry]) => localPreset(name, new URL(entry.file, folder))))
      : [];
    const remote = Object.entries(MODELS).map(([name, entry]) => ({
      name,
      source: name,
      text: `${name} · ${new URL(entry.url).host} · ${formatBytes(entry.size)}`,
    }));
    this.presets = [...local.filter(Boolean), ...remote];
    this.elements.preset.replaceChildren(...this.presets.map(({ text }) => new Option(text)));
  }

  setEnabled(enabled) {
    const { presetForm, urlForm, file } = this.elements;
    for (const control of [...presetForm.elements, ...urlForm.elements, file]) control.disabled = !enabled;
    this.enabled = enabled;
  }

  // Files dropped anywhere on the page load (the drop zone shows where);
  // without this, a dropped file would replace the page.
  #acceptDrops(onDrop) {
    const { dropZone } = this.elements;
    const hasFiles = (event) => event.dataTransfer?.types.includes('Files');
    document.addEventListener('dragover', (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = this.enabled ? 'copy' : 'none';
      dropZone.classList.toggle('dragging', this.enabled);
    });
    document.addEventListener('dragleave', (event) => {
      if (event.relatedTarget === null) dropZone.classList.remove('dragging');
    });
    document.addEventListener('drop', (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      dropZone.classList.remove('dragging');
      const [dropped] = event.dataTransfer.files;
      if (dropped && this.enabled) onDrop(dropped);
    });
  }
}

// The URL of the server's models folder, or null if it has none. Asked of
// the page's own URL, which exists on any host: probing a models URL that
// is not there would log a failed request on the console.
async function localModelsFolder() {
  try {
    const response = await fetch(location.href, { method: 'HEAD' });
    const folder = response.headers.get(MODELS_HEADER);
    return folder ? new URL(folder, location.href) : null;
  } catch {
    return null;
  }
}

// The preset for the server's copy (at `url`) of registry model `name`, or
// null if it has none (a HEAD request: nothing is downloaded).
async function localPreset(name, url) {
  try {
    const response = await fetch(url, { method: 'HEAD' });
    if (!response.ok) return null;
  } catch {
    return null;
  }
  return { name: url.pathname.split('/').pop(), source: url.href, text: `${name} · this server` };
}

// 'https://host/dir/model.gguf?x' → 'model.gguf'; anything else as given.
function fileNameOf(text) {
  try {
    const name = new URL(text, location.href).pathname.split('/').pop();
    return name || text;
  } catch {
    return text;
  }
}
