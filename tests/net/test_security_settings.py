"""Security settings by name: what goes together, and the TLS context and SASL mechanism made.

Combinations are refused on construction, naming the settings; files are read when a client
is made (``security()``), and a file that is missing or of the wrong kind is named.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest

from kafkawire.cluster import ConnectionSettings, SecuritySettings
from kafkawire.net import OAuthBearer, Plain, Scram, client_context
from kafkawire.net.sasl.jaas import OAUTHBEARER_LOGIN_MODULE, PLAIN_LOGIN_MODULE
from kafkawire.net.sasl.oauthbearer import OAuthBearerClient
from kafkawire.net.sasl.tokens import jwt_claims
from kafkawire.producer import Producer

from .pki import KEY_PASSWORD, Pki

SECRET = "pa55-w0rd-e9"
SSL = {"security_protocol": "SSL"}
SASL = {"security_protocol": "SASL_SSL"}
PLAIN_JAAS = f'{PLAIN_LOGIN_MODULE} required username="alice" password="{SECRET}";'


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ssl_cafile": "ca.pem"}, "ssl_cafile needs security_protocol 'SSL' or 'SASL_SSL'"),
        (
            {"security_protocol": "SASL_PLAINTEXT", "ssl_cafile": "ca.pem"},
            "ssl_cafile is for TLS, which security_protocol 'SASL_PLAINTEXT' does not use",
        ),
        (
            {"ssl_context": client_context(), **SSL, "ssl_cafile": "x"},
            "give ssl_context or the ssl_\\* settings, not both",
        ),
        ({**SSL, "ssl_cafile": "a", "ssl_truststore_location": "b"}, "give one of ssl_cafile"),
        ({**SSL, "ssl_keyfile": "k.pem"}, "ssl_keyfile needs ssl_certfile"),
        (
            {**SSL, "ssl_keystore_key": SECRET},
            "ssl_keystore_key needs ssl_keystore_certificate_chain",
        ),
        ({**SSL, "ssl_password": SECRET}, "ssl_password is the client key's password, but no key"),
        (
            {**SSL, "ssl_truststore_type": "JKS"},
            "JKS is not supported: convert .*keytool -list -rfc",
        ),
        ({**SSL, "ssl_keystore_type": "PKCS12"}, "PKCS12 is not supported: .*openssl pkcs12"),
        (
            {**SSL, "ssl_truststore_location": "ca.pem", "ssl_truststore_password": SECRET},
            "ssl_truststore_password is for JKS and PKCS12 stores, not PEM",
        ),
        ({"sasl_mechanism": "PLAIN"}, "sasl_mechanism needs security_protocol 'SASL_SSL'"),
        ({"security_protocol": "SASL_SSL"}, "needs sasl_mechanism .*GSSAPI, is not supported"),
        ({"security_protocol": "SSL", "sasl_mechanism": "PLAIN"}, "sasl_mechanism is for SASL"),
        (
            {"security_protocol": "PLAINTEXT", "sasl": Plain("a", "b")},
            "sasl is given, but security_protocol 'PLAINTEXT' has no SASL",
        ),
        (
            {"security_protocol": "SASL_PLAINTEXT", "ssl_context": client_context()},
            "ssl_context is given, but security_protocol 'SASL_PLAINTEXT' has no TLS",
        ),
        ({**SASL, "sasl": Plain("a", "b"), "sasl_mechanism": "PLAIN"}, "give sasl or the sasl_"),
        ({**SASL, "sasl_mechanism": "PLAIN"}, "needs sasl_plain_username and sasl_plain_password"),
        (
            {
                **SASL,
                "sasl_mechanism": "PLAIN",
                "sasl_jaas_config": PLAIN_JAAS,
                "sasl_plain_username": "a",
            },
            "give sasl_jaas_config or sasl_plain_username",
        ),
        (
            {**SASL, "sasl_mechanism": "SCRAM-SHA-256", "sasl_jaas_config": PLAIN_JAAS},
            "names PlainLoginModule, which is not for sasl_mechanism 'SCRAM-SHA-256'",
        ),
        (
            {**SASL, "sasl_mechanism": "PLAIN", "sasl_jaas_config": "com.example.Mine required;"},
            "login module com.example.Mine, which kafkawire does not have",
        ),
        (
            {
                **SASL,
                "sasl_mechanism": "PLAIN",
                "sasl_jaas_config": "com.sun.security.auth.module.Krb5LoginModule required;",
            },
            "Kerberos \\(GSSAPI\\) is not supported",
        ),
        (
            {
                **SASL,
                "sasl_mechanism": "OAUTHBEARER",
                "sasl_jaas_config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
            },
            "aws-msk-iam-sasl-signer",
        ),
        ({**SASL, "sasl_mechanism": "OAUTHBEARER"}, "OAUTHBEARER needs one source of tokens"),
        (
            {**SASL, "sasl_mechanism": "OAUTHBEARER", "sasl_plain_password": SECRET},
            "sasl_plain_password is not for sasl_mechanism 'OAUTHBEARER'",
        ),
        (
            {**SASL, "sasl_mechanism": "PLAIN", "sasl_oauthbearer_scope": "x"},
            "sasl_oauthbearer_scope is not for sasl_mechanism 'PLAIN'",
        ),
        (
            {
                **SASL,
                "sasl_mechanism": "OAUTHBEARER",
                "sasl_oauthbearer_token_endpoint_url": "http://idp.example/token",
            },
            "must be https://",
        ),
        (
            {
                **SASL,
                "sasl_mechanism": "OAUTHBEARER",
                "sasl_oauthbearer_token_endpoint_url": "https://idp.example/token",
            },
            "needs sasl_oauthbearer_client_id and sasl_oauthbearer_client_secret",
        ),
        (
            {
                **SASL,
                "sasl_mechanism": "OAUTHBEARER",
                "sasl_oauthbearer_token_endpoint_url": "https://idp.example/token",
                "sasl_oauthbearer_client_id": "c",
                "sasl_jaas_config": f'{OAUTHBEARER_LOGIN_MODULE} required clientId="d";',
            },
            "give sasl_oauthbearer_client_id or sasl_jaas_config's clientId, not both",
        ),
        (
            {
                **SASL,
                "sasl_mechanism": "OAUTHBEARER",
                "sasl_jaas_config": f"{OAUTHBEARER_LOGIN_MODULE} required"
                " unsecuredLoginStringClaim_sub=alice extension_bad-name=x;",
            },
            "the SASL extension name 'bad-name' must be ASCII letters only",
        ),
    ],
)
def test_settings_that_do_not_go_together(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        SecuritySettings(**options)
    assert SECRET not in str(error.value)


def test_the_objects_alone_imply_the_protocol() -> None:
    assert SecuritySettings().protocol == "PLAINTEXT"
    assert SecuritySettings(ssl_context=client_context()).protocol == "SSL"
    assert SecuritySettings(sasl=Plain("a", "b")).protocol == "SASL_PLAINTEXT"
    both = SecuritySettings(ssl_context=client_context(), sasl=Plain("a", "b"))
    assert both.protocol == "SASL_SSL"
    assert both.security() == (both.ssl_context, both.sasl)


def test_secrets_stay_out_of_repr_and_type_errors() -> None:
    settings = ConnectionSettings(
        bootstrap_servers="h:1",
        security_protocol="SASL_SSL",
        sasl_mechanism="PLAIN",
        sasl_jaas_config=PLAIN_JAAS,
    )
    assert SECRET not in repr(settings)
    assert "sasl_mechanism='PLAIN'" in repr(settings)
    with pytest.raises(TypeError, match="not a value of type bytes") as error:
        SecuritySettings(ssl_key_password=SECRET.encode())  # type: ignore[arg-type]
    assert SECRET not in str(error.value)


def _context(pki: Pki, **options: Any) -> ssl.SSLContext:
    context, mechanism = SecuritySettings(**SSL, **options).security()
    assert context is not None
    assert mechanism is None
    return context


def _trusted(context: ssl.SSLContext) -> list[str]:
    return [ca["subject"][0][0][1] for ca in context.get_ca_certs()]  # type: ignore[index]


def test_trust_from_a_file_a_pem_store_or_text(pki: Pki) -> None:
    for options in (
        {"ssl_cafile": str(pki.ca)},
        {"ssl_truststore_location": str(pki.ca)},
        {"ssl_truststore_type": "PEM", "ssl_truststore_location": str(pki.ca)},
        {"ssl_truststore_type": "PEM", "ssl_truststore_certificates": pki.ca.read_text()},
    ):
        context = _context(pki, **options)
        assert _trusted(context) == ["kafkawire-test-ca"]
        assert context.check_hostname
        assert context.verify_mode == ssl.CERT_REQUIRED
    assert not _context(pki, ssl_endpoint_identification_algorithm="").check_hostname


@pytest.mark.parametrize(
    "options",
    [
        lambda pki: {"ssl_certfile": str(pki.client_cert), "ssl_keyfile": str(pki.client_key)},
        lambda pki: {
            "ssl_certfile": str(pki.client_cert),
            "ssl_keyfile": str(pki.client_key_encrypted),
            "ssl_password": KEY_PASSWORD,
        },
        lambda pki: {"ssl_keystore_type": "PEM", "ssl_keystore_location": str(pki.client_bundle)},
        lambda pki: {
            "ssl_keystore_type": "PEM",
            "ssl_keystore_certificate_chain": pki.client_cert.read_text(),
            "ssl_keystore_key": pki.client_key_encrypted.read_text(),
            "ssl_key_password": KEY_PASSWORD,
        },
    ],
    ids=["files", "encrypted-key", "pem-keystore", "pem-text"],
)
def test_the_client_certificate_forms(pki: Pki, options: Any) -> None:
    _context(pki, ssl_cafile=str(pki.ca), **options(pki))  # loads, or raises


def test_a_wrong_key_password_or_a_missing_file_is_named(pki: Pki, tmp_path: Path) -> None:
    wrong = {
        "ssl_certfile": str(pki.client_cert),
        "ssl_keyfile": str(pki.client_key_encrypted),
        "ssl_password": SECRET,
    }
    with pytest.raises(ValueError, match=r"ssl_certfile could not be loaded: .*password") as error:
        _context(pki, **wrong)
    assert SECRET not in str(error.value)
    del wrong["ssl_password"]  # OpenSSL would ask for it on the terminal, and wait
    with pytest.raises(ValueError, match="encrypted, and no password is given for it"):
        _context(pki, **wrong)
    mismatch = {"ssl_certfile": str(pki.client_cert), "ssl_keyfile": str(pki.server_key)}
    with pytest.raises(ValueError, match="the private key does not belong to the certificate"):
        _context(pki, **mismatch)
    with pytest.raises(ValueError, match=f"ssl_cafile {tmp_path}/nowhere.pem: no such file"):
        _context(pki, ssl_cafile=str(tmp_path / "nowhere.pem"))
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")  # a JKS file's magic number
    with pytest.raises(ValueError, match="is not PEM \\(a JKS or PKCS12 store\\?\\): convert"):
        _context(pki, ssl_truststore_location=str(jks))
    with pytest.raises(ValueError, match="ssl_cafile could not be loaded"):
        _context(pki, ssl_cafile=str(pki.client_key))  # a key, not a certificate


def _mechanism(**options: Any) -> Any:
    context, mechanism = SecuritySettings(**options).security()
    assert (context is not None) == options["security_protocol"].endswith("SSL")
    return mechanism


async def test_password_mechanisms_by_settings_or_jaas() -> None:
    plain = _mechanism(**SASL, sasl_mechanism="PLAIN", sasl_jaas_config=PLAIN_JAAS)
    assert isinstance(plain, Plain)
    assert plain.initial_response() == f"\0alice\0{SECRET}".encode()
    for name in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        scram = _mechanism(
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism=name,
            sasl_plain_username="alice",
            sasl_plain_password=SECRET,
        )
        assert isinstance(scram, Scram)
        assert scram.name == name
        assert (await scram.start()).initial_response().startswith(b"n,,n=alice,r=")


async def test_oauthbearer_from_an_unsecured_jaas_login_with_extensions() -> None:
    jaas = (
        f"{OAUTHBEARER_LOGIN_MODULE} required unsecuredLoginStringClaim_sub=alice"
        ' extension_logicalCluster="lkc-1" extension_identityPoolId=pool-2;'
    )
    mechanism = _mechanism(**SASL, sasl_mechanism="OAUTHBEARER", sasl_jaas_config=jaas)
    assert isinstance(mechanism, OAuthBearer)
    session = await mechanism.start()
    assert isinstance(session, OAuthBearerClient)
    _, auth, *extensions = session.initial_response().decode().split("\x01")
    assert extensions == ["logicalCluster=lkc-1", "identityPoolId=pool-2", "", ""]
    claims = jwt_claims(auth.removeprefix("auth=Bearer "))
    assert claims is not None
    assert claims["sub"] == "alice"
    assert claims["exp"] - claims["iat"] == 3600


async def test_oauthbearer_from_a_token_provider_with_extensions() -> None:
    async def tokens() -> str:
        return "from.my.code"

    mechanism = _mechanism(
        **SASL,
        sasl_mechanism="OAUTHBEARER",
        sasl_oauthbearer_token_provider=tokens,
        sasl_oauthbearer_extensions={"logicalCluster": "lkc-1"},
    )
    first = (await mechanism.start()).initial_response()
    assert first == b"n,,\x01auth=Bearer from.my.code\x01logicalCluster=lkc-1\x01\x01"


def test_a_client_refuses_settings_that_do_not_go_together() -> None:
    with pytest.raises(ValueError, match="sasl_plain_username needs security_protocol"):
        Producer("h:1", sasl_plain_username="alice", sasl_plain_password=SECRET)
