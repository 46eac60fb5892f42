#!/usr/bin/env python3
"""A real local SMTP server for the delivery tests (Debian's python3-aiosmtpd,
ci/setup.sh): STARTTLS required when --cert/--key are given, AUTH (PLAIN,
LOGIN, over TLS only) required when --user/--password are, every message
accepted written to --maildir as one JSON file (envelope and content).

  /usr/bin/python3 fake_smtp.py --port-file F --maildir DIR [--cert C --key K] [--user U --password P]
"""
import argparse
import json
import os
import signal
import socket
import ssl
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Saver:
    def __init__(self, maildir):
        self.maildir = maildir
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        path = os.path.join(self.maildir, f"{time.time():.6f}-{self.count}.json")
        with open(path + ".tmp", "w") as f:
            json.dump({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                       "content": envelope.content.decode("utf-8", errors="replace"),
                       "tls": session.ssl is not None,
                       "auth": session.authenticated}, f)
        os.replace(path + ".tmp", path)
        return "250 Message accepted for delivery"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--maildir", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--user")
    parser.add_argument("--password")
    args = parser.parse_args()
    os.makedirs(args.maildir, exist_ok=True)
    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kwargs = {}
    if args.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
        kwargs.update(tls_context=context, require_starttls=True)
    if args.user:
        def authenticate(server, session, envelope, mechanism, auth_data):
            ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.user
                  and auth_data.password.decode() == args.password)
            return AuthResult(success=ok, handled=False)  # handled=False: the server answers 535
        kwargs.update(authenticator=authenticate, auth_required=True, auth_require_tls=bool(args.cert))
    controller = Controller(Saver(args.maildir), hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(args.port_file + ".tmp", args.port_file)
    signal.signal(signal.SIGTERM, lambda *_: (controller.stop(), os._exit(0)))
    signal.pause()


if __name__ == "__main__":
    main()
