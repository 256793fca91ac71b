#!/usr/bin/env python3
"""Writes tests/js/chat-golden/<vocab>.json: the chat templates embedded in
the vocabularies of ../shared/models/vocab/, rendered by Python's Jinja2 the
way transformers' apply_chat_template renders them (a sandboxed environment
with trim_blocks and lstrip_blocks, loop controls, raise_exception and a
tojson that keeps non-ASCII text), for conversations of several turns and,
where a template takes tools, with tools, calls and results; where a
template refuses a conversation (raise_exception), its message.
tests/js/chat-templates.test.mjs renders the same through chat()
(@huggingface/jinja) and expects the same text, or the same refusal.

Run from the repository root after a vocabulary or a conversation changes:
    python3 tools/gen_chat_golden.py
"""
import hashlib
import json
import os
import struct
import sys

import jinja2
import jinja2.ext
import jinja2.sandbox

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB_DIR = os.path.join(os.environ.get('WASM_LLM_SHARED', os.path.join(REPO, '..', 'shared')), 'models', 'vocab')
OUT_DIR = os.path.join(REPO, 'tests', 'js', 'chat-golden')

# The vocabularies whose file carries a template, and which of their
# templates (tokenizer.chat_template, or a named one) take tools.
VOCABS = {
    'ggml-vocab-qwen2.gguf': {'tools': False},
    'ggml-vocab-qwen35.gguf': {'tools': False},
    'ggml-vocab-command-r.gguf': {'tools': False, 'named': {'tool_use': True}},
    'ggml-vocab-gemma-4.gguf': {'tools': True},
}

CONVERSATION = [
    {'role': 'system', 'content': 'You are a terse assistant.'},
    {'role': 'user', 'content': ' What is the capital of France? '},
    {'role': 'assistant', 'content': 'Paris.'},
    {'role': 'user', 'content': 'And of Japan?\nAnswer in one word, please: “Tokyo” or not.'},
]
NO_SYSTEM = CONVERSATION[1:]

# OpenAI-style tools, as chat APIs pass them.
TOOLS = [
    {'type': 'function', 'function': {
        'name': 'get_weather',
        'description': 'Current weather in a city.',
        'parameters': {
            'type': 'object',
            'properties': {
                'city': {'type': 'string', 'description': 'The city, e.g. Paris.'},
                'unit': {'type': 'string', 'description': 'Temperature unit.', 'enum': ['celsius', 'fahrenheit']},
                'days': {'type': 'integer', 'description': 'Days of forecast.'},
            },
            'required': ['city'],
        },
    }},
    {'type': 'function', 'function': {
        'name': 'search',
        'description': 'Searches the web.',
        'parameters': {
            'type': 'object',
            'properties': {
                'query': {'type': 'string', 'description': 'What to look for.'},
                'filters': {'type': 'array', 'description': 'Sites to keep.', 'items': {'type': 'string'}},
            },
            'required': ['query'],
        },
    }},
]
# Gemma 4's turn with a call and its result.
TOOL_TURNS = [
    {'role': 'user', 'content': 'Is it warm in Paris?'},
    {'role': 'assistant', 'content': '', 'tool_calls': [
        {'type': 'function', 'function': {'name': 'get_weather', 'arguments': {'city': 'Paris', 'unit': 'celsius'}}},
    ], 'tool_responses': [
        {'name': 'get_weather', 'response': {'temperature': 21, 'sky': 'clear', 'warm': True}},
    ]},
    {'role': 'assistant', 'content': 'Yes: 21 °C and clear.'},
    {'role': 'user', 'content': 'And tomorrow?'},
]
# Command-R's tool_use template takes Cohere's tool format.
COHERE_TOOLS = [
    {'name': 'internet_search', 'description': 'Returns a list of relevant document snippets for a textual query.',
     'parameter_definitions': {
         'query': {'description': 'Query to search the internet with', 'type': 'str', 'required': True},
         'max_results': {'description': 'How many results to return', 'type': 'int', 'required': False},
     }},
    {'name': 'directly_answer', 'description': 'Calls a standard (un-augmented) AI chatbot to generate a response.',
     'parameter_definitions': {}},
]


def read_gguf_metadata(path):
    """The key-value metadata of a GGUF file (v2/v3), as Python values."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] != b'GGUF':
        raise ValueError(f'{path}: not a GGUF file')
    pos = 8
    _n_tensors, n_kv = struct.unpack_from('<QQ', data, pos)
    pos += 16
    scalars = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}

    def string():
        nonlocal pos
        (n,) = struct.unpack_from('<Q', data, pos)
        s = data[pos + 8:pos + 8 + n].decode('utf-8', errors='surrogateescape')
        pos += 8 + n
        return s

    def value(kind):
        nonlocal pos
        if kind == 8:
            return string()
        if kind == 9:
            elem, n = struct.unpack_from('<IQ', data, pos)
            pos += 12
            return [value(elem) for _ in range(n)]
        fmt = '<' + scalars[kind]
        (v,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v

    kvs = {}
    for _ in range(n_kv):
        key = string()
        (kind,) = struct.unpack_from('<I', data, pos)
        pos += 4
        kvs[key] = value(kind)
    return kvs


def environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=[jinja2.ext.loopcontrols])
    env.filters['tojson'] = tojson
    env.globals['raise_exception'] = raise_exception
    return env


def cases(tools):
    out = [
        {'name': 'a system prompt and two user turns', 'messages': CONVERSATION, 'add_generation_prompt': True},
        {'name': 'no system prompt, no generation prompt', 'messages': NO_SYSTEM, 'add_generation_prompt': False},
        # Command-R's template refuses this with raise_exception().
        {'name': 'two user turns in a row', 'messages': [NO_SYSTEM[0], NO_SYSTEM[2]], 'add_generation_prompt': True},
    ] if tools != 'cohere' else []
    if tools == 'openai':
        out.append({'name': 'tools, a call and its result', 'messages': TOOL_TURNS, 'tools': TOOLS,
                    'add_generation_prompt': True})
    if tools == 'cohere':
        out.append({'name': 'tools', 'messages': CONVERSATION, 'tools': COHERE_TOOLS, 'add_generation_prompt': True})
    return out


def render_all(source, bos, eos, tools):
    template = environment().from_string(source)
    rendered = []
    for case in cases(tools):
        variables = {'messages': case['messages'], 'add_generation_prompt': case['add_generation_prompt'],
                     'bos_token': bos, 'eos_token': eos}
        if 'tools' in case:
            variables['tools'] = case['tools']
        try:
            rendered.append({**case, 'expected': template.render(**variables)})
        except jinja2.exceptions.TemplateError as e:
            rendered.append({**case, 'error': str(e)})
    return rendered


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for vocab, spec in VOCABS.items():
        kvs = read_gguf_metadata(os.path.join(VOCAB_DIR, vocab))
        tokens = kvs['tokenizer.ggml.tokens']
        bos = tokens[kvs['tokenizer.ggml.bos_token_id']] if 'tokenizer.ggml.bos_token_id' in kvs else ''
        eos = tokens[kvs['tokenizer.ggml.eos_token_id']] if 'tokenizer.ggml.eos_token_id' in kvs else ''
        templates = [('', kvs['tokenizer.chat_template'], 'openai' if spec['tools'] else None)]
        for name, takes_tools in spec.get('named', {}).items():
            templates.append((name, kvs['tokenizer.chat_template.' + name], 'cohere' if takes_tools else None))
        out = {'vocab': vocab, 'bos_token': bos, 'eos_token': eos, 'templates': []}
        for name, source, tools in templates:
            out['templates'].append({
                'name': name or 'tokenizer.chat_template',
                'sha256': hashlib.sha256(source.encode('utf-8')).hexdigest(),
                'source': source if name else None,  # the main one comes from the model
                'cases': render_all(source, bos, eos, tools),
            })
        path = os.path.join(OUT_DIR, vocab.replace('.gguf', '.json'))
        with open(path, 'w', encoding='utf-8') as f:
            json.dump(out, f, ensure_ascii=False, indent=1)
            f.write('\n')
        print(f'wrote {os.path.relpath(path, REPO)}', file=sys.stderr)


if __name__ == '__main__':
    main()
