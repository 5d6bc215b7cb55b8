// The tfdebug extension: the `tfdebug` debugger type (package.json runs `tfdebug dap`), and hovers
// over module and parameter names in Python files from a run's shapes.json (the setting
// tfdebug.shapesFile; default: tfdebug_run/shapes.json in the first workspace folder, where the
// manifest's launch snippet writes it).
'use strict';
const path = require('path');
const vscode = require('vscode');
const { loadShapes, hoverText } = require('./shapes');

function shapesFile() {
  const configured = vscode.workspace.getConfiguration('tfdebug').get('shapesFile');
  if (configured) return configured;
  const folders = vscode.workspace.workspaceFolders;
  return folders && folders.length > 0 ? path.join(folders[0].uri.fsPath, 'tfdebug_run', 'shapes.json') : '';
}

function activate(context) {
  const provider = {
    provideHover(document, position) {
      const range = document.getWordRangeAtPosition(position, /[A-Za-z_][A-Za-z0-9_.]*/);
      if (!range) return undefined;
      const text = hoverText(loadShapes(shapesFile()), document.getText(range));
      return text ? new vscode.Hover(new vscode.MarkdownString(text)) : undefined;
    },
  };
  context.subscriptions.push(vscode.languages.registerHoverProvider({ language: 'python' }, provider));
}

function deactivate() {}

module.exports = { activate, deactivate };
