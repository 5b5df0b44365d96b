# Run by ContainerMechanismsTests inside the sandbox ("isolated") and, as the control, without it:
#   container-egress.py MESSAGE TCP4_PORT TCP6_PORT UDP_PORT DNS_PORT ABSTRACT_NAME SOCKET_PATH
# Every attempt goes to a listener of the test on loopback (127.0.0.1, ::1, ::ffff:127.0.0.1)
# or to a unix socket the test created; never to any other address. One line per attempt,
# NAME=OK or NAME=ERRNO; each payload names its message and its attempt.
import errno, socket, struct, sys

message, tcp4, tcp6, udp, dns, abstract, path = sys.argv[1:8]


def attempt(name, run):
    try:
        run((message + " " + name + "\n").encode())
        print(name + "=OK", flush=True)
    except OSError as ex:
        print(name + "=" + errno.errorcode.get(ex.errno, str(ex.errno)), flush=True)


def stream(family, address):
    def run(payload):
        with socket.socket(family, socket.SOCK_STREAM) as connection:
            connection.settimeout(10)
            connection.connect(address)
            connection.sendall(payload)
    return run


def datagram(family, address, query=False):
    def run(payload):
        if query:
            # A DNS query (RFC 1035): id, recursion desired, one question: A IN of
            # cave-sandbox-MESSAGE.example.
            name = b"".join(bytes([len(label)]) + label
                            for label in (("cave-sandbox-" + message).encode(), b"example")) + b"\0"
            payload = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + name + struct.pack("!HH", 1, 1)
        with socket.socket(family, socket.SOCK_DGRAM) as sender:
            sender.sendto(payload, address)
    return run


attempt("tcp4", stream(socket.AF_INET, ("127.0.0.1", int(tcp4))))
attempt("tcp6", stream(socket.AF_INET6, ("::1", int(tcp6))))
attempt("tcp4-mapped", stream(socket.AF_INET6, ("::ffff:127.0.0.1", int(tcp4))))
attempt("udp4", datagram(socket.AF_INET, ("127.0.0.1", int(udp))))
attempt("udp4-mapped", datagram(socket.AF_INET6, ("::ffff:127.0.0.1", int(udp))))
attempt("dns", datagram(socket.AF_INET, ("127.0.0.1", int(dns)), query=True))
attempt("unix-abstract", stream(socket.AF_UNIX, "\0" + abstract))
attempt("unix-path", stream(socket.AF_UNIX, path))
