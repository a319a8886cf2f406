/** A finding of the parser, as put in a 400's details. */
export interface Finding {
  field: string;
  message: string;
  path: string;
}

/**
 * The client's document is at fault (invalid, too big, too slow). Thrown inside the spec worker,
 * which has no access to the service's error classes; the main thread turns it into a 400.
 */
export class SpecRejection extends Error {
  constructor(
    message: string,
    readonly findings: Finding[],
  ) {
    super(message);
    this.name = 'SpecRejection';
  }
}

/** A rejection with one finding about the whole document (`field: 'spec'`, empty path). */
export function rejectSpec(message: string, finding: string): SpecRejection {
  return new SpecRejection(message, [{ field: 'spec', path: '', message: finding }]);
}

/** The rejection for a document that takes longer than the job's limit to process. */
export function tookTooLong(timeoutMs: number): SpecRejection {
  const seconds = `${Number((timeoutMs / 1000).toFixed(3))} s`;
  return rejectSpec(`The spec took longer than ${seconds} to process.`, `took longer than ${seconds} to process`);
}

/** The rejection for a document whose processing ran out of the worker's memory. */
export function neededTooMuchMemory(megabytes: number): SpecRejection {
  return rejectSpec(
    `The spec needs more than ${megabytes} MB of memory to process.`,
    `needs more than ${megabytes} MB of memory to process`,
  );
}
