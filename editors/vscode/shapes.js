// Hover text from a run's shapes.json (docs/debugger.md, "Shapes by module"): what the tfdebug
// extension shows over a module or parameter name in the editor. No VS Code API here, so that
// tests/dap/vscode_shapes_test.js runs it under plain node.
'use strict';
const fs = require('fs');

let cached = { path: '', mtimeMs: -1, doc: null };

// The parsed file, read again only when it changed; null when it is missing or not a shapes file.
function loadShapes(path) {
  let stat;
  try {
    stat = fs.statSync(path);
  } catch (e) {
    return null;
  }
  if (cached.path === path && cached.mtimeMs === stat.mtimeMs) return cached.doc;
  let doc = null;
  try {
    doc = JSON.parse(fs.readFileSync(path, 'utf8'));
    if (doc.format !== 'tfdebug-shapes' || !Array.isArray(doc.modules)) doc = null;
  } catch (e) {
    doc = null;
  }
  cached = { path, mtimeMs: stat.mtimeMs, doc };
  return doc;
}

function tensorText(t) {
  return t.dtype + '[' + t.shape.join(', ') + ']';
}

// `word` names a module ("blocks.1.mlp", or its last part "mlp") or a parameter
// ("blocks.1.mlp.fc1.weight", or "fc1.weight"): a Markdown text of the matching modules' parameters
// and forward ops, at most `limit` modules; "" when nothing matches.
function hoverText(doc, word, limit = 6) {
  if (!doc || !word) return '';
  const matches = (path) => path === word || path.endsWith('.' + word);
  const lines = [];
  let shown = 0;
  for (const m of doc.modules) {
    const parameters = m.parameters.filter((p) => matches(p.name));
    const moduleMatches = m.module !== '' && matches(m.module);
    if (!moduleMatches && parameters.length === 0) continue;
    if (shown === limit) {
      lines.push('...');
      break;
    }
    ++shown;
    lines.push('**' + m.module + '**');
    for (const p of moduleMatches ? m.parameters : parameters) lines.push('- `' + p.name + '` ' + tensorText(p));
    if (!moduleMatches) continue;
    for (const op of m.ops.filter((o) => o.phase === 'forward')) {
      lines.push('- `' + op.op + '` ' + op.inputs.map(tensorText).join(', ') + ' → ' + tensorText(op.output));
    }
  }
  if (lines.length === 0) return '';
  return lines.join('\n') + '\n\n(tfdebug shapes.json, steps ' + doc.first_step + '-' + doc.last_step + ')';
}

module.exports = { loadShapes, hoverText };
