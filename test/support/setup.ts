import { afterAll, afterEach } from 'vitest';
import { settleWatches } from './internalErrors.js';

// Every test file: an internal error a service logged fails the test it was logged in (or the file,
// when it was logged after the last test), unless the test declared it (see internalErrors.ts).
afterEach(() => settleWatches());
afterAll(() => settleWatches());
