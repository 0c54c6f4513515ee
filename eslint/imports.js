/**
 * The imports of a TypeScript file, for the project's own lint rules: read with TypeScript's parser (static,
 * type-only, re-exports, `import()` in code and in types, `require()`) and resolved as the nearest tsconfig.json says.
 * Only relative specifiers are followed: packages are outside the graph (and this project has no path aliases).
 */
'use strict';

const path = require('node:path');
const ts = require('typescript');

/** Compiler options and a resolution cache per tsconfig.json, by its path ('' when there is none). */
const resolvers = new Map();
/** The last text of each file that was read, and the imports found in it. */
const parsed = new Map();

function resolverFor(file) {
  const configFile = ts.findConfigFile(path.dirname(file), ts.sys.fileExists) ?? '';
  let resolver = resolvers.get(configFile);
  if (!resolver) {
    const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} };
    const options = (configFile && ts.getParsedCommandLineOfConfigFile(configFile, {}, host)?.options) || {};
    const cache = ts.createModuleResolutionCache(path.dirname(configFile || file), (name) => name, options);
    resolver = { options, cache };
    resolvers.set(configFile, resolver);
  }
  return resolver;
}

/** Every module specifier written in `text`, with its place. A full parse: `ts.preProcessFile` misses imports after a regex with a backtick. */
function specifiersOf(file, text) {
  // Doc comments are not parsed: imports are all this needs, and they are most of a file's text here.
  const source = ts.createSourceFile(file, text, {
    languageVersion: ts.ScriptTarget.Latest,
    jsDocParsingMode: ts.JSDocParsingMode.ParseNone,
  });
  const specifiers = [];
  const visit = (node) => {
    let specifier;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) specifier = node.moduleSpecifier;
    else if (ts.isExternalModuleReference(node)) specifier = node.expression;
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) specifier = node.argument.literal;
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    )
      specifier = node.arguments[0];
    if (specifier && ts.isStringLiteralLike(specifier))
      specifiers.push({ name: specifier.text, pos: specifier.getStart(source), end: specifier.end });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/** The project files that `text`, the source of `file`, imports, each with where its specifier is written. */
function importsOf(file, text) {
  const last = parsed.get(file);
  if (last?.text === text) return last.imports;
  const { options, cache } = resolverFor(file);
  const imports = [];
  for (const { name, pos, end } of specifiersOf(file, text)) {
    if (!name.startsWith('.')) continue;
    const resolved = ts.resolveModuleName(name, file, options, ts.sys, cache).resolvedModule;
    if (!resolved || resolved.isExternalLibraryImport || resolved.extension === ts.Extension.Json) continue;
    imports.push({ target: path.resolve(resolved.resolvedFileName), pos, end });
  }
  parsed.set(file, { text, imports });
  return imports;
}

module.exports = { importsOf };
