import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTINGS, type SettingName } from '../../src/config.js';

// One table of settings (src/config.ts): docs/configuration.md lists exactly it, with the same defaults,
// and nothing else in the service reads the environment.
const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** The rows of the documentation's table: the variables a row names, and its default cell. */
function documentedRows(): { names: string[]; defaultCell: string }[] {
  return doc
    .split('\n')
    .filter((line) => /^\| `[A-Z_]+`/.test(line))
    .map((line) => {
      const [names, defaultCell] = line.split(' | ');
      return { names: [...names.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]), defaultCell: defaultCell.trim() };
    });
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('configuration', () => {
  it('docs/configuration.md lists every setting of the table, and only those, with the same defaults', () => {
    const rows = documentedRows();
    expect(rows.flatMap((row) => row.names).sort()).toEqual(Object.keys(SETTINGS).sort());
    for (const row of rows) {
      const defaults = [...new Set(row.names.map((name) => SETTINGS[name as SettingName].doc))];
      expect(row.defaultCell, `default of ${row.names.join(' / ')}`).toBe(defaults.join(' / '));
    }
  });

  it('each number default is the one the parse gives', () => {
    for (const [name, setting] of Object.entries(SETTINGS)) {
      const value: unknown = setting.parse(undefined);
      if (typeof value === 'number') expect(setting.doc, name).toMatch(new RegExp(`^\`${value}\``));
    }
  });

  it('names every bad value at once, and a broken pair', () => {
    const fails = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      throw new Error('loadConfig accepted a bad environment');
    };
    expect(
      fails({ PORT: '-1', RATE_LIMIT_MAX: 'many', LOG_LEVEL: 'loud', PUBLIC_URL: 'https://x.example/path', TRUST_PROXY: 'nope' }),
    ).toEqual([
      'PORT must be a whole number (0 or more), got "-1"',
      'RATE_LIMIT_MAX must be a positive integer, got "many"',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'PUBLIC_URL must be an origin such as https://docs.example.com, got "https://x.example/path"',
      expect.stringMatching(/^TRUST_PROXY is not a hop count or a list of proxy addresses/),
    ]);
    expect(fails({ OIDC_CLIENT_ID: 'x' })).toEqual(['OIDC_ISSUER (an http(s) URL) and OIDC_CLIENT_ID are needed together']);
    expect(fails({ SEARCH_INDEX_MB: '5' })).toEqual(['SEARCH_INDEX_MB must be an integer from 16 to 1000000, got "5"']);
    const config = loadConfig({
      MEMORY_HISTORY_KEPT: '0',
      PUBLIC_URL: 'https://docs.example.com/',
      CORS_ORIGINS: 'https://a.example, https://b.example',
    });
    expect(config.MEMORY_HISTORY_KEPT).toBe(0);
    expect(config.PUBLIC_URL).toBe('https://docs.example.com');
    expect(config.CORS_ORIGINS).toEqual(['https://a.example', 'https://b.example']);
    expect(config.RATE_LIMIT_MAX).toBe(600);
    // The embedder's names: unset or local (the sentence encoder), off, glove; anything else stops the start.
    expect(loadConfig({ EMBEDDINGS: 'local' }).EMBEDDINGS).toBe('local');
    expect(fails({ EMBEDDINGS: 'on' })).toEqual(['EMBEDDINGS must be one of local, off, glove, got "on"']);
  });

  it('nothing but src/config.ts reads the environment (the command line has its own)', () => {
    const root = new URL('../../', import.meta.url).pathname;
    // The repository's own top-level modules too (mikro-orm.config.ts reads DATABASE_URL through the table).
    const topLevel = readdirSync(root)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(root, name));
    const readers = [...sources(join(root, 'src')), ...sources(join(root, 'rest')), ...topLevel]
      .filter((path) => !path.includes('/src/cli/') && !path.endsWith('/src/config.ts'))
      .filter((path) => /process\.env\b/.test(readFileSync(path, 'utf8')))
      .map((path) => path.slice(root.length));
    // The start hands process.env to the table's own parse (loadConfig).
    expect(readers.sort()).toEqual(['src/main.ts']);
  });

  it('npm start names every bad value and stops with status 2 before opening any database', async () => {
    const root = new URL('../../', import.meta.url).pathname;
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', '@swc-node/register/esm-register', 'src/main.ts'],
        { cwd: root, env: { ...process.env, PORT: 'eighty', WS_RECHECK_MS: '0', DATABASE_URL: '' }, timeout: 60_000 },
        (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('PORT must be a whole number (0 or more), got "eighty"');
    expect(run.stderr).toContain('WS_RECHECK_MS must be a positive integer, got "0"');
  }, 60_000);
});
