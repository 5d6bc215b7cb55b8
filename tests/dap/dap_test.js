// `tfdebug dap` driven by the DebugClient of npm's @vscode/debugadapter-testsupport (the client
// VS Code's own adapters are tested with), on a real run of the demo with the planted NaN
// (fault log: aten::log in blocks.1.mlp, step 73): a function breakpoint on a module and the NaN
// exception breakpoint; the stack, scopes and variables at each stop; evaluate; continue to the
// end. Usage: node dap_test.js TFDEBUG [PORT_MODE]
'use strict';
const assert = require('assert');
const cp = require('child_process');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const tfdebug = process.argv[2];
const overTcp = process.argv[3] === 'tcp';

async function startClient() {
  const dc = new DebugClient(tfdebug, 'dap', 'tfdebug');
  dc.defaultTimeout = 30000;
  if (!overTcp) {
    await dc.start();
    return { dc, server: null };
  }
  // `tfdebug dap --port 0` prints the port it listens on.
  const server = cp.spawn(tfdebug, ['dap', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise((resolve, reject) => {
    let text = '';
    server.stderr.on('data', (d) => {
      text += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (code) => reject(new Error('tfdebug dap exited ' + code + ': ' + text)));
  });
  await dc.start(port);
  return { dc, server };
}

async function main() {
  const { dc, server } = await startClient();
  const outputs = [];
  dc.on('output', (e) => outputs.push(e.body.output));

  const initialized = dc.waitForEvent('initialized');  // sent right after the response
  const init = await dc.initializeRequest();
  assert.strictEqual(init.body.supportsConfigurationDoneRequest, true);
  assert.strictEqual(init.body.supportsFunctionBreakpoints, true);
  assert.deepStrictEqual(init.body.exceptionBreakpointFilters.map((f) => f.filter), ['nan', 'finding']);
  await initialized;
  await dc.launchRequest({ fault: 'log', steps: 100 });

  // A module (its backward entry at step 2 only, by condition on nothing: an ignore of 0) and the NaN.
  const fb = await dc.setFunctionBreakpointsRequest({
    breakpoints: [{ name: 'module blocks.1.mlp backward once' }, { name: 'bogus place here' },
                  { name: 'op aten::mm', condition: 'abs_max > 1e30' }],
  });
  assert.strictEqual(fb.body.breakpoints.length, 3);
  assert.strictEqual(fb.body.breakpoints[0].verified, true);
  assert.strictEqual(fb.body.breakpoints[1].verified, false);
  assert.match(fb.body.breakpoints[1].message, /unknown place 'bogus'/);
  assert.strictEqual(fb.body.breakpoints[2].verified, true);
  const eb = await dc.setExceptionBreakpointsRequest({ filters: ['nan'] });
  assert.strictEqual(eb.body.breakpoints[0].verified, true);
  const moduleStop = dc.waitForEvent('stopped');
  await dc.configurationDoneRequest();

  // 1: the module breakpoint, in backward at step 0.
  let stopped = await moduleStop;
  assert.strictEqual(stopped.body.reason, 'breakpoint');
  assert.match(stopped.body.description, /entered blocks\.1\.mlp \(backward\)/);
  const threads = await dc.threadsRequest();
  assert.deepStrictEqual(threads.body.threads, [{ id: 1, name: 'training' }]);
  let stack = await dc.stackTraceRequest({ threadId: 1 });
  let names = stack.body.stackFrames.map((f) => f.name);
  assert.match(names[0], /^aten::\S+ \(backward, step 0\)$/);
  assert.ok(names.includes('blocks.1.mlp'), names.join(' | '));
  assert.deepStrictEqual(names.slice(-2), ['blocks.1', 'blocks']);
  let scopes = await dc.scopesRequest({ frameId: 0 });
  assert.deepStrictEqual(scopes.body.scopes.map((s) => s.name), ['Output', 'Inputs', 'Parameters', 'Gradients']);
  const params = await dc.variablesRequest({ variablesReference: scopes.body.scopes[2].variablesReference });
  const fc1 = params.body.variables.find((v) => v.name === 'blocks.1.mlp.fc1.weight');
  assert.ok(fc1, params.body.variables.map((v) => v.name).join(' '));
  assert.strictEqual(fc1.type, 'f32[64, 32]');
  // Step 0's backward has reached the head and the last layer norm, not yet the blocks.
  const grads = await dc.variablesRequest({ variablesReference: scopes.body.scopes[3].variablesReference });
  const head = params.body.variables.find((v) => v.name === 'head.weight');
  const headGrad = grads.body.variables.find((v) => v.name === 'head.weight.grad');
  assert.ok(headGrad, grads.body.variables.map((v) => v.name).join(' '));
  assert.strictEqual(headGrad.type, head.type);
  assert.ok(!grads.body.variables.some((v) => v.name === 'blocks.1.mlp.fc1.weight.grad'));

  // 2: continue to the NaN: an exception stop at aten::log in blocks.1.mlp, forward, step 73.
  const nanStop = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  stopped = await nanStop;
  assert.strictEqual(stopped.body.reason, 'exception');
  assert.strictEqual(stopped.body.text, 'nan');
  stack = await dc.stackTraceRequest({ threadId: 1 });
  names = stack.body.stackFrames.map((f) => f.name);
  assert.deepStrictEqual(names, ['aten::log (forward, step 73)', 'blocks.1.mlp', 'blocks.1', 'blocks']);
  scopes = await dc.scopesRequest({ frameId: 0 });
  const inputs = await dc.variablesRequest({ variablesReference: scopes.body.scopes[1].variablesReference });
  assert.strictEqual(inputs.body.variables.length, 1);
  const input0 = inputs.body.variables[0];
  assert.strictEqual(input0.name, 'input0');
  assert.strictEqual(input0.type, 'f32[32, 16, 64]');
  assert.match(input0.value, /count 32768  min -\S+ .* negative 1  zero 0  nan 0  inf 0$/);
  // A tensor expands into slices along its first dimension, then values.
  const rows = await dc.variablesRequest({ variablesReference: input0.variablesReference });
  assert.strictEqual(rows.body.variables[0].name, '[0]');
  assert.strictEqual(rows.body.variables[0].type, 'f32[16, 64]');
  assert.strictEqual(rows.body.variables[16].name, '...');
  const output = await dc.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
  assert.match(output.body.variables[0].value, / nan 1  inf 0$/);
  // Evaluate: a tensor (hover), a slice, and a console command.
  const hover = await dc.evaluateRequest({ expression: 'input0', context: 'hover', frameId: 0 });
  assert.match(hover.body.result, /^f32\[32, 16, 64\]  f32 count 32768/);
  const slice = await dc.evaluateRequest({ expression: 'input0[0, 0, :4]', context: 'watch', frameId: 0 });
  assert.match(slice.body.result, /^f32\[4\]  f32 count 4  min /);
  const where = await dc.evaluateRequest({ expression: 'where', context: 'repl', frameId: 0 });
  assert.match(where.body.result, /^#0 aten::log  f32\[32, 16, 64\]  \(output\)\n#1 blocks\.1\.mlp\n/);

  // 3: next op, then continue to the end: the run finishes, terminated and exited events.
  const stepStop = dc.waitForEvent('stopped');
  await dc.nextRequest({ threadId: 1 });
  stopped = await stepStop;
  assert.strictEqual(stopped.body.reason, 'step');
  const terminated = dc.waitForEvent('terminated');
  const exited = dc.waitForEvent('exited');
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  await dc.continueRequest({ threadId: 1 });
  await terminated;
  assert.strictEqual((await exited).body.exitCode, 0);
  // The findings came as output events, the NaN's first.
  assert.ok(outputs.some((o) => /^error \[nonfinite\] aten::log in blocks\.1\.mlp produced/.test(o)), outputs.join(''));
  await dc.disconnectRequest({});
  dc.stopAdapter();
  if (server) await new Promise((resolve) => server.on('exit', resolve));
  console.log('dap test passed' + (overTcp ? ' (tcp)' : ' (stdio)'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
