"""The headless OAuth flows beyond client credentials, on the SDK's extension providers.

``private_key_jwt``: client credentials where the client authenticates with a JWT it signs
(RFC 7523 §2.2, SEP-1046) — the SDK's `PrivateKeyJWTOAuthProvider` with
`SignedJWTParameters` (``iss`` and ``sub`` are the client id, ``aud`` the authorization
server's issuer).

``identity_assertion``: enterprise-managed cross-app access (SEP-990). The SDK's
`IdentityAssertionOAuthProvider` trades an ID-JAG for an access token at the configured
issuer (RFC 7523 jwt-bearer grant); obtaining the ID-JAG is left to the caller, and ponder
does it with an RFC 8693 token exchange of the user's ID token at the identity provider.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
from mcp.client.auth import OAuthFlowError, TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

from ponder.exceptions import ConfigError
from ponder.mcp.config import OAuthSettings

__all__ = ["id_jag_exchange", "identity_assertion_provider", "private_key_jwt_provider"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
_TIMEOUT = 30.0


def _private_key(settings: OAuthSettings) -> str:
    if settings.private_key is not None:
        return settings.private_key.get_secret_value()
    path = Path(settings.private_key_file or "").expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            "oauth.private_key_file", f"cannot read {str(path)!r}: {exc.strerror}"
        ) from None


def private_key_jwt_provider(
    settings: OAuthSettings, url: str, storage: TokenStorage
) -> httpx2.Auth:
    """Client credentials authenticated with a JWT signed by the configured key."""
    client_id = settings.client_id or ""
    signer = SignedJWTParameters(
        issuer=client_id,
        subject=client_id,
        signing_key=_private_key(settings),
        signing_algorithm=settings.signing_algorithm,
    )
    return PrivateKeyJWTOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client_id,
        assertion_provider=signer.create_assertion_provider(),
        scope=settings.scope,
        issuer=settings.issuer,
    )


def id_jag_exchange(settings: OAuthSettings) -> Callable[[str, str], Awaitable[str]]:
    """The callback that gets an ID-JAG for ``(audience, resource)`` from the identity provider."""

    async def exchange(audience: str, resource: str) -> str:
        assert settings.id_token is not None and settings.idp_token_endpoint is not None
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": settings.id_token.get_secret_value(),
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": audience,
            "resource": resource,
        }
        if settings.idp_client_id:
            form["client_id"] = settings.idp_client_id
        if settings.idp_client_secret is not None:
            form["client_secret"] = settings.idp_client_secret.get_secret_value()
        async with httpx2.AsyncClient(timeout=_TIMEOUT) as client:
            try:
                response = await client.post(settings.idp_token_endpoint, data=form)
            except httpx2.HTTPError as exc:
                raise OAuthFlowError(f"the identity provider is unreachable: {exc}") from None
        try:
            body = response.json()
        except ValueError:
            body = {}
        token = body.get("access_token") if isinstance(body, dict) else None
        if response.status_code != 200 or not isinstance(token, str):
            reason = body.get("error", "") if isinstance(body, dict) else ""
            raise OAuthFlowError(
                f"the identity provider refused the token exchange ({response.status_code}"
                + (f" {reason}" if reason else "")
                + ")"
            )
        if body.get("issued_token_type") not in (None, ID_JAG):
            raise OAuthFlowError(
                f"the identity provider issued {body.get('issued_token_type')!r}, not an ID-JAG"
            )
        return token

    return exchange


def identity_assertion_provider(
    settings: OAuthSettings, url: str, storage: TokenStorage
) -> httpx2.Auth:
    """Cross-app access: the user's ID token → ID-JAG → an access token at ``issuer``."""
    return IdentityAssertionOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=settings.client_id or "",
        client_secret=settings.client_secret.get_secret_value() if settings.client_secret else "",
        issuer=settings.issuer or "",
        assertion_provider=id_jag_exchange(settings),
        scope=settings.scope,
        token_endpoint_auth_method=settings.token_endpoint_auth_method,
    )
