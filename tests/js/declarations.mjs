// What js/index.d.ts declares, read with the TypeScript compiler's parser:
// the tests compare the implementation with it.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from './helpers.mjs';

const file = path.join(repoRoot, 'js/index.d.ts');
const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);

function declaration(kind, name) {
  const found = source.statements.find((s) => s.kind === kind && s.name?.text === name);
  if (!found) throw new Error(`index.d.ts declares no ${ts.SyntaxKind[kind]} ${name}`);
  return found;
}

// The property names of `interface name`, in order.
export function interfaceMembers(name) {
  return declaration(ts.SyntaxKind.InterfaceDeclaration, name).members.map((m) => m.name.text);
}

// The string literals of `type name = 'a' | 'b' | ...`, in order.
export function unionMembers(name) {
  const { type } = declaration(ts.SyntaxKind.TypeAliasDeclaration, name);
  const members = ts.isUnionTypeNode(type) ? type.types : [type];
  return members.map((m) => {
    if (!ts.isLiteralTypeNode(m) || !ts.isStringLiteral(m.literal)) throw new Error(`${name} has a member that is no string`);
    return m.literal.text;
  });
}
