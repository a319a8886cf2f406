import { Field, Int, ObjectType, type ClassType } from 'type-graphql';

/** Where a page of a connection ends and whether more follow (Relay's PageInfo, forward only). */
@ObjectType({ description: 'Where a page ends: pass `endCursor` as `after` while `hasNextPage` is true.' })
export class PageInfo {
  @Field() hasNextPage!: boolean;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

/** One item of a connection with the cursor that points just past it. */
export interface Edge<T> {
  node: T;
  cursor: string;
}

/** A page of a Relay-style connection, as services return it. */
export interface Connection<T> {
  edges: Edge<T>[];
  pageInfo: PageInfo;
  totalCount: number;
}

/**
 * A Relay-style connection type: `{ edges { node cursor } pageInfo { hasNextPage endCursor } totalCount }`.
 * Each list declares its own (`class MemberConnection extends ConnectionOf(Member) {}`), so the
 * shape is written once; services return the plain `Connection<T>`.
 */
export function ConnectionOf<T extends object>(node: ClassType<T>) {
  @ObjectType(`${node.name}Edge`)
  class EdgeClass {
    @Field(() => node) node!: T;
    @Field({ description: 'Opaque: pass as `after` to read the items after this one.' }) cursor!: string;
  }

  @ObjectType()
  abstract class ConnectionClass {
    @Field(() => [EdgeClass]) edges!: Edge<T>[];
    @Field(() => PageInfo) pageInfo!: PageInfo;
    @Field(() => Int, { description: 'How many items match the filters, on every page.' }) totalCount!: number;
  }
  return ConnectionClass;
}
