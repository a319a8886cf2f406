// The stall scenario's other agent, in a process of its own (sending from the probe's process held
// the probe's own event loop and counted in its GETs' times): reads the requests of the JSON file
// named by its argument ({ parallel, requests: [{ method, url, headers, bodyFile }] }) and their
// bodies, says "ready", waits for a line on stdin, sends them (all at once, or one after another),
// prints their statuses as JSON and exits.
/* global fetch */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const { parallel, requests } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const prepared = requests.map(({ bodyFile, ...request }) => ({ ...request, body: new Uint8Array(readFileSync(bodyFile)) }));
const send = async ({ method, url, headers, body }) => {
  const res = await fetch(url, { method, headers, body });
  await res.arrayBuffer();
  return res.status;
};
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
process.stdout.write('ready\n');
await lines.next();
const statuses = [];
if (parallel) statuses.push(...(await Promise.all(prepared.map(send))));
else for (const request of prepared) statuses.push(await send(request));
process.stdout.write(`${JSON.stringify(statuses)}\n`);
process.exit(0);
