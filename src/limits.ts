/** Field bounds shared by GraphQL input validation and the REST/OpenAPI schemas. */
export const LIMITS = {
  nameLength: 200,
  titleLength: 200,
  markdownLength: 200_000,
  tagCount: 20,
  tagLength: 50,
  permissionCount: 32,
  emailLength: 320,
  pageDefault: 50,
  pageMax: 100,
  cursorLength: 200,
} as const;
