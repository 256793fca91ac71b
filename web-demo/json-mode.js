// Chat's JSON mode: when it is on, the reply is constrained to JSON (the
// `format` option), to any JSON object or, with a schema in the box, to a
// value valid against it.
export class JsonMode {
  constructor({ box, toggle, schema }) {
    this.box = box;
    this.toggle = toggle;
    this.schema = schema;
    toggle.addEventListener('change', () => this.#showSchema());
    this.#showSchema();
  }

  // Chat only: completion has no JSON mode.
  show(chat) {
    this.box.hidden = !chat;
  }

  setEnabled(enabled) {
    this.toggle.disabled = !enabled;
    this.schema.disabled = !enabled || !this.toggle.checked;
  }

  // What is wrong with the schema box, as {title, detail} for the page's
  // error box, or null.
  problem() {
    if (!this.toggle.checked || this.schema.value.trim() === '') return null;
    try {
      JSON.parse(this.schema.value);
      return null;
    } catch (error) {
      return { title: 'The JSON schema is not valid JSON.', detail: error.message };
    }
  }

  // The generation options for the mode: {} when it is off (after problem() is null).
  options() {
    if (!this.toggle.checked) return {};
    const text = this.schema.value.trim();
    return { format: text === '' ? 'json_object' : { type: 'json_schema', schema: JSON.parse(text) } };
  }

  // A headline for an error about the schema (the engine names the keyword
  // it cannot enforce), or null.
  errorTitle(error) {
    return this.toggle.checked && /JSON schema/.test(error?.message ?? '') ? 'The JSON schema cannot be used.' : null;
  }

  #showSchema() {
    this.schema.disabled = !this.toggle.checked;
  }
}
