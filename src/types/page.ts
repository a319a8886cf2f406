import { Field, ObjectType, type ClassType } from 'type-graphql';

/**
 * A page of a list in GraphQL: its items and the cursor of the next page. Every list's page type
 * extends it (`class MemoryIndexPage extends PageOf(MemoryIndexEntry) {}`), so the shape is
 * declared once; services return the plain `Page<T>` of `pagination.ts`.
 */
export function PageOf<T extends object>(item: ClassType<T>) {
  @ObjectType()
  abstract class PageClass {
    @Field(() => [item]) items!: T[];
    @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
    nextCursor!: string | null;
  }
  return PageClass;
}
