// `tfdebug dap` on a TorchScript model with data (launch arguments model, input, labels, out),
// driven by npm's @vscode/debugadapter-testsupport DebugClient: the NaN planted in the input
// stops at the first op that receives it (aten::linear in enc); the stack, the parameters and
// their shapes; continue to the end; the run's shapes.json lists the model's modules.
// Usage: node dap_model_test.js TFDEBUG DIR (DIR holds make_debug_model.py's files).
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const tfdebug = process.argv[2];
const dir = process.argv[3];

async function main() {
  const dc = new DebugClient(tfdebug, 'dap', 'tfdebug');
  dc.defaultTimeout = 30000;
  await dc.start();
  const initialized = dc.waitForEvent('initialized');
  await dc.initializeRequest();
  await initialized;
  const out = path.join(dir, 'dap_run');
  await dc.launchRequest({ model: path.join(dir, 'model.pt'), input: path.join(dir, 'x_nan.npy'),
                           labels: path.join(dir, 'y.npy'), steps: 2, out });
  await dc.setExceptionBreakpointsRequest({ filters: ['nan'] });
  const nanStop = dc.waitForEvent('stopped');
  await dc.configurationDoneRequest();

  const stopped = await nanStop;
  assert.strictEqual(stopped.body.reason, 'exception');
  assert.match(stopped.body.description, /received from the input data/);
  const stack = await dc.stackTraceRequest({ threadId: 1 });
  assert.deepStrictEqual(stack.body.stackFrames.map((f) => f.name), ['aten::linear (forward, step 0)', 'enc']);
  const scopes = await dc.scopesRequest({ frameId: 0 });
  const inputs = await dc.variablesRequest({ variablesReference: scopes.body.scopes[1].variablesReference });
  assert.strictEqual(inputs.body.variables[0].type, 'f32[5, 6]');
  assert.match(inputs.body.variables[0].value, / nan 1  inf 0$/);
  const params = await dc.variablesRequest({ variablesReference: scopes.body.scopes[2].variablesReference });
  const types = Object.fromEntries(params.body.variables.map((v) => [v.name, v.type]));
  assert.deepStrictEqual(types, { 'enc.weight': 'f32[8, 6]', 'enc.bias': 'f32[8]', 'head.weight': 'f32[3, 8]',
                                  'head.bias': 'f32[3]' });

  const terminated = dc.waitForEvent('terminated');
  const exited = dc.waitForEvent('exited');
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  await dc.continueRequest({ threadId: 1 });
  await terminated;
  assert.strictEqual((await exited).body.exitCode, 0);
  await dc.disconnectRequest({});
  dc.stopAdapter();

  const shapes = JSON.parse(fs.readFileSync(path.join(out, 'shapes.json'), 'utf8'));
  assert.strictEqual(shapes.format, 'tfdebug-shapes');
  assert.strictEqual(shapes.last_step, 1);
  const enc = shapes.modules.find((m) => m.module === 'enc');
  assert.deepStrictEqual(enc.parameters.map((p) => [p.name, p.shape.join('x')]),
                         [['enc.bias', '8'], ['enc.weight', '8x6']]);
  const linear = enc.ops.find((o) => o.op === 'aten::linear' && o.phase === 'forward');
  assert.deepStrictEqual(linear.output, { dtype: 'f32', shape: [5, 8] });
  assert.deepStrictEqual(linear.inputs.map((i) => i.shape.join('x')), ['5x6', '8x6', '8']);
  console.log('dap model test passed');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
