/** Finding Assent as its command line does: `ASSENT_URL` and `ASSENT_TOKEN`, else the home's
 * `server.json` and `agent.token` (`ASSENT_HOME`, else the platform's data directory), and the
 * server's proof (`GET /v1/hello`) before any token is sent. */
export interface Where {
    url?: string;
    token?: string;
    home?: string;
}
export interface Endpoint {
    url: string;
    token: string;
    proofKey: Buffer | null;
}
export declare function homeDir(): string;
export declare function discover(where?: Where): Endpoint;
/** Asks the server to prove it holds the home's key; Impostor unless it does. */
export declare function prove(ep: Endpoint): Promise<void>;
