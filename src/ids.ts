const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A well-formed UUID (anything else cannot exist and is answered as not found without a query). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
