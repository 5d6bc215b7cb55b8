// The VS Code extension's hovers (editors/vscode/extension.js, shapes.js) over a real run's
// shapes.json: the extension activated against a stand-in for the `vscode` module (only what it
// calls), its hover provider asked about a module, a parameter and an unknown word.
// Usage: node vscode_shapes_test.js SHAPES_JSON (a run of make_debug_model.py's model).
'use strict';
const assert = require('assert');
const Module = require('module');
const path = require('path');

const shapesJson = process.argv[2];
const registered = [];
class Hover {
  constructor(contents) { this.contents = contents; }
}
class MarkdownString {
  constructor(value) { this.value = value; }
}
const fakeVscode = {
  Hover,
  MarkdownString,
  workspace: {
    getConfiguration: (section) => ({ get: (key) => (section === 'tfdebug' && key === 'shapesFile' ? shapesJson : undefined) }),
    workspaceFolders: [],
  },
  languages: {
    registerHoverProvider: (selector, provider) => {
      registered.push({ selector, provider });
      return { dispose() {} };
    },
  },
};
const load = Module._load;
Module._load = function (request, ...rest) {
  return request === 'vscode' ? fakeVscode : load.call(this, request, ...rest);
};

const extension = require(path.join(__dirname, '../../editors/vscode/extension.js'));
const context = { subscriptions: [] };
extension.activate(context);
assert.strictEqual(registered.length, 1);
assert.deepStrictEqual(registered[0].selector, { language: 'python' });
assert.strictEqual(context.subscriptions.length, 1);

// A document of one word: the provider asks for the word at the position, then its text.
function hover(word) {
  const document = {
    getWordRangeAtPosition: (position, pattern) => (pattern.test(word) ? { word } : undefined),
    getText: (range) => range.word,
  };
  return registered[0].provider.provideHover(document, { line: 0, character: 0 });
}

const enc = hover('enc');
assert.ok(enc instanceof Hover);
const text = enc.contents.value;
assert.match(text, /^\*\*enc\*\*\n/);
assert.ok(text.includes('- `enc.weight` f32[8, 6]'), text);
assert.ok(text.includes('- `enc.bias` f32[8]'), text);
assert.ok(text.includes('- `aten::linear` f32[5, 6], f32[8, 6], f32[8] → f32[5, 8]'), text);
assert.ok(!text.includes('head'), text);
// A parameter by the end of its name: its module and only it.
const weight = hover('head.weight').contents.value;
assert.ok(weight.startsWith('**head**\n- `head.weight` f32[3, 8]\n\n'), weight);
assert.strictEqual(hover('nothing_here'), undefined);
console.log('vscode shapes test passed');
