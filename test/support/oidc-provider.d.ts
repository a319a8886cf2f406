// The `oidc-provider` package ships no types: the test provider (oidcProvider.ts) uses it untyped.
declare module 'oidc-provider' {
  const Provider: any;
  export default Provider;
}
