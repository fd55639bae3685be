// A real OpenID Connect provider on the loopback for the team server's tests (tests/services.py
// starts it): panva/oidc-provider with its development login form, where any login is accepted and
// becomes the account's e-mail. Never for production: it trusts whoever types an address.
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [{
    client_id: process.env.CLIENT_ID,
    client_secret: process.env.CLIENT_SECRET,
    redirect_uris: process.env.REDIRECT_URIS.split(','),
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: id, email_verified: true, name: id.split('@')[0] };
      },
    };
  },
  conformIdTokenClaims: false, // the e-mail in the ID token itself: st.user reads the ID token
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ['compile-viz-test-only'] },
  ttl: { Session: 3600, Interaction: 600, Grant: 3600, AccessToken: 600, IdToken: 600 },
});
provider.listen(port, '127.0.0.1', () => console.log(`oidc-provider on ${issuer}`));
