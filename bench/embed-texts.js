// The texts the embedding benchmark embeds: `count` texts of exactly
// `tokens` tokens with a BERT vocabulary ([CLS], tokens − 2 words of one
// token each, [SEP]), no two alike.
const WORDS = ['hello', 'world', 'cat', 'dog', 'house', 'tree', 'water', 'light'];

export function embedTexts(tokens, count) {
  return Array.from({ length: count }, (_, i) =>
    Array.from({ length: tokens - 2 }, (_, j) => WORDS[(i * 3 + j * (1 + (i % 5))) % WORDS.length]).join(' '));
}
