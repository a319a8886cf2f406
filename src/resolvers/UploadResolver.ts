import { GraphQLUpload, type FileUpload } from 'graphql-upload-minimal';
import { Arg, Ctx, Field, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import { Caller, Needs, type Scope } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import * as uploads from '../services/uploads.js';

@ObjectType({ description: 'A stored image. `url` is a same-origin path anyone can GET (immutable, unguessable).' })
class UploadResult {
  @Field() url!: string;
  @Field() id!: string;
  @Field({ description: 'Detected from the bytes: image/png, image/jpeg, image/webp or image/gif.' }) contentType!: string;
  @Field(() => Int, { description: 'Bytes.' }) size!: number;
  @Field(() => Int) width!: number;
  @Field(() => Int) height!: number;
  @Field() sha256!: string;
}

/** Image uploads, endpoint 20 (also reachable as a GraphQL multipart request). */
@Resolver()
export class UploadResolver {
  @Needs(['upload.image'])
  @Mutation(() => UploadResult)
  async uploadImage(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>) {
    return uploads.uploadImage(ctx, scope, await file);
  }
}
