// Renders a Jinja template with bounded work. A chat template comes from the
// model file, so it is input like any other: a loop of a billion steps or a
// range() of a billion numbers must fail, not freeze the caller (templates
// render synchronously, on the caller's thread).
import { Environment, Interpreter } from '@huggingface/jinja';

// Real templates take 20 to 60 steps per message (qwen2, gemma-4): a
// conversation of 5000 messages stays below the limit, and a hostile
// template stops within a second.
export const MAX_TEMPLATE_STEPS = 500_000;
export const MAX_RANGE_LENGTH = 100_000;

// @huggingface/jinja has no limits of its own: while one of our renders
// runs (only then: other users of the library are not limited), each step of
// its interpreter (an evaluation, or a variable set: a loop's iteration sets
// several) counts against the render's budget, and the range() its globals
// get is ours.
let rendering = false;
let stepsLeft = 0;
const evaluate = Interpreter.prototype.evaluate;
Interpreter.prototype.evaluate = function countedEvaluate(statement, environment) {
  if (rendering && --stepsLeft < 0) throw new Error(`it takes more than ${MAX_TEMPLATE_STEPS} steps`);
  return evaluate.call(this, statement, environment);
};
const setVariable = Environment.prototype.setVariable;
Environment.prototype.setVariable = function countedSetVariable(name, value) {
  if (rendering && --stepsLeft < 0) throw new Error(`it takes more than ${MAX_TEMPLATE_STEPS} steps`);
  return setVariable.call(this, name, value);
};
const set = Environment.prototype.set;
Environment.prototype.set = function boundedSet(name, value) {
  return set.call(this, name, rendering && name === 'range' ? boundedRange : value);
};

// Jinja's range(), refusing more than MAX_RANGE_LENGTH numbers.
function boundedRange(start, stop, step = 1) {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new Error('range() step must not be zero');
  const length = Math.max(0, Math.ceil((stop - start) / step));
  if (!(length <= MAX_RANGE_LENGTH)) throw new Error(`range() of ${length} numbers is more than ${MAX_RANGE_LENGTH}`);
  return Array.from({ length }, (_, i) => start + i * step);
}

// template.render(items) with the limits above.
export function renderBounded(template, items) {
  rendering = true;
  stepsLeft = MAX_TEMPLATE_STEPS;
  try {
    return template.render(items);
  } finally {
    rendering = false;
  }
}
