/**
 * A local OAuth authorization server for tests: RFC 8414 metadata, a JSON Web Key Set, a client_credentials token
 * endpoint (RFC 8707 `resource` becomes the token's audience), and a signer for any token a test needs, good or bad.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
type PrivateKey = Awaited<ReturnType<Jose['generateKeyPair']>>['privateKey'];

/** Claims of a test token; `iss`, `iat` and `exp` default to this issuer, now, and five minutes from now. */
export type Claims = Record<string, unknown>;

/** Who signs a token: the issuer's key, a key it never published, or another key under the issuer's key id. */
export type Signer = 'issuer' | 'stranger' | 'impostor';

const KEY_ID = 'issuer-key-1';

/** A running local issuer. */
export class TestIssuer {
  /** Requests for the key set, for tests that check the server fetched it. */
  jwksRequests = 0;
  private readonly clients = new Map<string, string>();

  private constructor(
    private readonly jose: Jose,
    private readonly server: http.Server,
    readonly url: string,
    private readonly keys: Record<Signer, { key: PrivateKey; kid: string }>,
    private readonly jwks: object,
  ) {}

  /** Generates the keys and listens on a free loopback port. */
  static async start(): Promise<TestIssuer> {
    const jose = await import('jose');
    const [issuer, stranger, impostor] = await Promise.all([1, 2, 3].map(() => jose.generateKeyPair('RS256')));
    const jwk = { ...(await jose.exportJWK(issuer.publicKey)), kid: KEY_ID, alg: 'RS256', use: 'sig' };
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const self = new TestIssuer(
      jose,
      server,
      url,
      {
        issuer: { key: issuer.privateKey, kid: KEY_ID },
        stranger: { key: stranger.privateKey, kid: 'stranger-key' },
        impostor: { key: impostor.privateKey, kid: KEY_ID },
      },
      { keys: [jwk] },
    );
    server.on('request', (req, res) => void self.handle(req, res));
    return self;
  }

  /** The key set's URL. */
  get jwksUrl(): string {
    return `${this.url}/jwks`;
  }

  /** Registers a confidential client for the token endpoint; returns its id and secret. */
  registerClient(clientId: string): { clientId: string; clientSecret: string } {
    const clientSecret = randomUUID();
    this.clients.set(clientId, clientSecret);
    return { clientId, clientSecret };
  }

  /** A signed RS256 access token. */
  async token(claims: Claims, signer: Signer = 'issuer'): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const { key, kid } = this.keys[signer];
    return new this.jose.SignJWT({ iss: this.url, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid })
      .sign(key);
  }

  /** An unsecured token (`alg: none`) with the same default claims. */
  unsigned(claims: Claims): string {
    const now = Math.floor(Date.now() / 1000);
    return new this.jose.UnsecuredJWT({ iss: this.url, iat: now, exp: now + 300, ...claims }).encode();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const json = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const { pathname } = new URL(req.url ?? '/', this.url);
    if (pathname === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: this.url,
        authorization_endpoint: `${this.url}/authorize`,
        token_endpoint: `${this.url}/token`,
        jwks_uri: this.jwksUrl,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (pathname === '/jwks') {
      this.jwksRequests++;
      return json(200, this.jwks);
    }
    if (pathname === '/token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const [clientId, secret] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':')
        .map(decodeURIComponent);
      if (!clientId || this.clients.get(clientId) !== secret) return json(401, { error: 'invalid_client' });
      if (form.get('grant_type') !== 'client_credentials') return json(400, { error: 'unsupported_grant_type' });
      const resource = form.get('resource');
      const scope = form.get('scope') ?? undefined;
      const accessToken = await this.token({ sub: clientId, ...(resource && { aud: resource }), ...(scope && { scope }) });
      return json(200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, ...(scope && { scope }) });
    }
    json(404, { error: 'not_found' });
  }
}
