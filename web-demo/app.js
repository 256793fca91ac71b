// The demo page's wiring: a model is picked and loaded, then text is
// generated (completion or chat) while the figures update, or sentences are
// searched by meaning. One thing runs at a time; body[data-state] says which
// ('idle', 'loading', 'generating' or 'searching') and the buttons follow
// it. Every failure ends in a readable message and back in 'idle', so the
// page stays usable.
import { LLM } from '../js/browser.js';
import { CachePanel } from './cache-panel.js';
import { CompletionView } from './completion.js';
import { Conversation } from './conversation.js';
import { generateErrorText, loadErrorText } from './error-text.js';
import { JsonMode } from './json-mode.js';
import { LoadProgress, loadedText } from './load-progress.js';
import { ModelPicker } from './model-picker.js';
import { SearchPanel } from './search-panel.js';
import { Settings } from './settings.js';
import { Stats } from './stats.js';

const $ = (id) => document.getElementById(id);

const STOP_REASON_TEXT = {
  max_tokens: 'reached the token limit',
  end_of_generation: 'the model ended the text',
  stop_string: 'hit a stop string',
  context_full: 'the context is full',
};

const page = {
  state: 'starting',
  llm: null,      // the loaded model, if any
  running: null,  // AbortController of the load or generation under way
};

const settings = new Settings({ form: $('settings'), threadsHint: $('threads-hint') });
const stats = new Stats($('stats'));
const completion = new CompletionView($('completion'));
const conversation = new Conversation($('chat-log'));
const jsonMode = new JsonMode({ box: $('json-mode'), toggle: $('json-toggle'), schema: $('json-schema') });
const progress = new LoadProgress(
  { box: $('load-progress'), bar: $('progress-bar'), text: $('progress-text'), cancel: $('cancel-load') },
  () => page.running?.abort(),
);
const cache = new CachePanel(
  { summary: $('cache-summary'), list: $('cache-list'), clear: $('clear-cache') },
  (error) => showError({ title: 'Could not clear the cache.', detail: error.message }),
);
const searchPanel = new SearchPanel({
  sentences: $('search-sentences'), query: $('search-query'), status: $('search-status'), results: $('search-results'),
});
const picker = new ModelPicker(
  { presetForm: $('preset-form'), preset: $('preset'), urlForm: $('url-form'), url: $('model-url'),
    file: $('model-file'), dropZone: $('drop-zone') },
  loadModel,
);

$('prompt-form').addEventListener('submit', (event) => {
  event.preventDefault();
  generate();
});
$('prompt').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    generate();
  }
});
$('stop').addEventListener('click', () => page.running?.abort());
$('search-form').addEventListener('submit', (event) => {
  event.preventDefault();
  search();
});
$('new-chat').addEventListener('click', () => conversation.reset());
for (const radio of document.querySelectorAll('input[name="mode"]')) radio.addEventListener('change', showMode);
document.querySelector('.error-dismiss').addEventListener('click', clearError);

showIsolation();
showMode();
await Promise.all([picker.init(), cache.refresh()]);
setState('idle');

// Loads `source` (named `label` in messages) in place of the current model.
async function loadModel(source, label) {
  if (page.state !== 'idle' || !settings.check()) return;
  clearError();
  const controller = new AbortController();
  page.running = controller;
  setState('loading');
  // One model in memory at a time: models can take gigabytes.
  await page.llm?.dispose();
  page.llm = null;
  stats.showModel(null);
  progress.start(label);
  $('model-status').textContent = `Loading ${label}…`;
  $('generation-status').textContent = '';
  const startedAt = performance.now();
  try {
    page.llm = await LLM.load(source, {
      ...settings.loadOptions(),
      signal: controller.signal,
      onProgress: (p) => progress.update(p),
    });
    $('model-status').textContent = loadedText(label, page.llm.info, (performance.now() - startedAt) / 1000);
    stats.showModel(page.llm.info);
  } catch (error) {
    const { title, detail } = loadErrorText(error, label);
    const aborted = error?.code === 'aborted';
    $('model-status').textContent = aborted ? title : 'No model loaded.';
    if (!aborted) showError({ title, detail });
  } finally {
    progress.hide();
    await cache.refresh();  // a download was added to it
    page.running = null;
    setState('idle');
  }
}

// Generates from the prompt box: a continuation, or the next chat reply.
async function generate() {
  if (page.state !== 'idle' || !page.llm || !settings.check()) return;
  const chat = chatMode();
  const promptBox = $('prompt');
  const prompt = promptBox.value;
  if (chat && !prompt.trim()) return;
  clearError();
  const problem = chat && jsonMode.problem();
  if (problem) {
    showError(problem);
    return;
  }
  const controller = new AbortController();
  page.running = controller;
  setState('generating');
  let finished = null;  // the generation's stats, once it has ended
  const options = {
    ...settings.generateOptions(), ...(chat ? jsonMode.options() : {}), signal: controller.signal, onStats: (s) => (finished = s),
  };
  const view = chat ? conversation : completion;
  const onPiece = stats.startGeneration();
  $('generation-status').textContent = 'Generating…';
  try {
    let pieces;
    if (chat) {
      pieces = page.llm.chatStream(conversation.start(prompt.trim()), options);
      promptBox.value = '';
    } else {
      completion.start(prompt);
      pieces = page.llm.stream(prompt, options);
    }
    for await (const piece of pieces) {
      view.append(piece);
      onPiece();
    }
    view.end();
    const { generatedTokens, stopReason, cachedTokens } = finished;
    stats.finish(finished);
    const reused = cachedTokens > 0 ? ` Reused ${cachedTokens} prompt tokens from the cache.` : '';
    $('generation-status').textContent =
      `Done: ${generatedTokens} tokens, ${STOP_REASON_TEXT[stopReason] ?? stopReason}.${reused}`;
  } catch (error) {
    stats.interrupted();
    if (error?.code === 'aborted') {
      view.end({ stopped: true });
      $('generation-status').textContent = 'Stopped.';
    } else {
      if (chat && conversation.reply) {
        conversation.end({ failed: true });
        promptBox.value = prompt;  // to send again
      }
      $('generation-status').textContent = '';
      const text = generateErrorText(error);
      showError({ ...text, title: jsonMode.errorTitle(error) ?? text.title });
    }
  } finally {
    page.running = null;
    setState('idle');
  }
}

// Ranks the search panel's sentences against its query with the loaded model.
async function search() {
  if (page.state !== 'idle' || !page.llm) return;
  clearError();
  const controller = new AbortController();
  page.running = controller;
  setState('searching');
  try {
    await searchPanel.search(page.llm, controller.signal);
  } catch (error) {
    $('search-status').textContent = '';
    if (error?.code !== 'aborted') {
      const tooLong = error?.code === 'context_full';
      showError({ title: tooLong ? 'A sentence is too long for the context.' : 'The search failed.',
        detail: error?.message ?? String(error) });
    }
  } finally {
    page.running = null;
    setState('idle');
  }
}

function setState(state) {
  page.state = state;
  document.body.dataset.state = state;
  const idle = state === 'idle';
  picker.setEnabled(idle);
  cache.setBusy(!idle);
  $('generate').disabled = !idle || !page.llm || page.llm.info.encoder;
  $('search').disabled = !idle || !page.llm;
  $('stop').disabled = state !== 'generating';
  $('new-chat').disabled = !idle;
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.disabled = !idle;
  jsonMode.setEnabled(idle);
}

function chatMode() {
  return document.querySelector('input[name="mode"]:checked').value === 'chat';
}

// Completion and chat have their own output; the prompt box serves both.
function showMode() {
  const chat = chatMode();
  $('completion').hidden = chat;
  $('chat-log').hidden = !chat;
  $('new-chat').hidden = !chat;
  jsonMode.show(chat);
  $('generate').textContent = chat ? 'Send' : 'Generate';
  $('prompt').placeholder = chat ? 'Say something to the model' : 'Once upon a time';
}

function showIsolation() {
  const mode = $('mode');
  mode.classList.add(crossOriginIsolated ? 'threaded' : 'single');
  mode.textContent = crossOriginIsolated
    ? 'Threaded: this page is cross-origin isolated'
    : 'Single-thread: this page is not cross-origin isolated';
}

function showError({ title, detail }) {
  const box = $('error');
  box.querySelector('.error-title').textContent = title;
  box.querySelector('.error-detail').textContent = detail;
  box.hidden = false;
}

function clearError() {
  $('error').hidden = true;
}
