// The tools the generation tests call (tool-chat.test.mjs, openai.test.mjs,
// the browser's): OpenAI's shape and the function alone, arguments of every
// kind, each bounded so that a random model finishes its calls.
export const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1, maxLength: 12, description: 'The city' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'], description: 'The unit' },
          days: { type: 'integer', minimum: 1, maximum: 7, description: 'How many days' },
        },
        required: ['city'],
      },
    },
  },
  {
    name: 'add',
    description: 'Adds two numbers',
    parameters: {
      type: 'object',
      properties: { a: { type: 'number', minimum: -100, maximum: 100 }, b: { type: 'integer', minimum: 0, maximum: 9 } },
      required: ['a', 'b'],
    },
  },
  {
    name: 'tag',
    parameters: {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { enum: ['red', 'green', 'blue'] }, minItems: 1, maxItems: 3 },
        urgent: { type: 'boolean' },
      },
      required: ['tags'],
    },
  },
  { name: 'now', description: 'The time now' },
];
export const SCHEMAS = Object.fromEntries(TOOLS.map((t) => [t.function?.name ?? t.name, t.function?.parameters ?? t.parameters ?? {}]));
