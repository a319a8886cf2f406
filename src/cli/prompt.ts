import { createInterface } from 'node:readline/promises';

/** Asks for each value on the terminal (Enter keeps the default shown in brackets). */
export async function ask(questions: { label: string; default: string; check?: (v: string) => string | null }[]): Promise<string[]> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answers: string[] = [];
    for (const q of questions) {
      for (;;) {
        const answer = (await rl.question(`${q.label} [${q.default}]: `)).trim() || q.default;
        const problem = q.check?.(answer) ?? null;
        if (!problem) {
          answers.push(answer);
          break;
        }
        process.stderr.write(`  ${problem}\n`);
      }
    }
    return answers;
  } finally {
    rl.close();
  }
}
