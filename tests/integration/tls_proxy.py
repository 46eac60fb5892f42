#!/usr/bin/env python3
"""A TLS-terminating proxy on loopback, as a site puts in front of `twinbench
serve` (--public-url https://...): it takes HTTPS on 127.0.0.1:<free port>
with a self-signed certificate made for the occasion (the openssl command)
and passes each connection's bytes, decrypted, to the server's plain-HTTP
port and back. The Host header goes through as the browser sent it, as a
proxy that passes it on does. tests/integration/serve_browser.py runs
Chromium through it (--via-tls-proxy).
"""
import os
import socket
import ssl
import subprocess
import threading


class TlsProxy:
    def __init__(self, backend_port, workdir):
        cert, key = os.path.join(workdir, "proxy-cert.pem"), os.path.join(workdir, "proxy-key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.backend_port = backend_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw):
        try:
            client = self.context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()  # a probe, or a browser that refused the certificate
            return
        self.connections += 1
        backend = socket.create_connection(("127.0.0.1", self.backend_port))

        def pipe(src, dst):
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        threading.Thread(target=pipe, args=(backend, client), daemon=True).start()
        pipe(client, backend)

    def close(self):
        self.listener.close()
