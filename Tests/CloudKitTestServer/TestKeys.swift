import Crypto
import Foundation
import NestedCloudKitWebServices

/// A key made for these tests only (`openssl ecparam -name prime256v1 -genkey`), with the EC PARAMETERS block
/// OpenSSL writes before it unless told `-noout`.
public enum TestKeys {
    public static let keyID = "test-key-id-0123456789abcdef"

    public static let privateKeyPEM = """
        -----BEGIN EC PARAMETERS-----
        BggqhkjOPQMBBw==
        -----END EC PARAMETERS-----
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIGv3qwnv7qFyPfPUrazj1FeLyMn2MSl4kUt71vn6NadsoAoGCCqGSM49
        AwEHoUQDQgAE4mv3hw0ZmYrvCYOSiBixBpOKxssIiKpWrhAUpZf46r3Zm7OWcuoi
        8NpfrUrsqx3G9+dywzuMxAs7HPidCCDM8w==
        -----END EC PRIVATE KEY-----
        """

    public static let publicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE4mv3hw0ZmYrvCYOSiBixBpOKxssI
        iKpWrhAUpZf46r3Zm7OWcuoi8NpfrUrsqx3G9+dywzuMxAs7HPidCCDM8w==
        -----END PUBLIC KEY-----
        """

    public static func serverToServerKey() throws -> ServerToServerKey {
        try ServerToServerKey(keyID: keyID, pemRepresentation: privateKeyPEM)
    }

    public static func publicKey() throws -> P256.Signing.PublicKey {
        try P256.Signing.PublicKey(pemRepresentation: publicKeyPEM)
    }
}
