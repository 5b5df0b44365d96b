# socket(AF_INET, SOCK_STREAM) through the i386 entry point (int 0x80, call 359) or the
# x32 one (call 41 | 0x40000000), from an x86-64 process; the socket is never connected.
import ctypes
import mmap
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[1] == "x32":
    result = libc.syscall(0x40000000 + 41, 2, 1, 0)
    print("x32", result, os.strerror(ctypes.get_errno()) if result < 0 else "", flush=True)
else:
    # mov eax, 359; mov ebx, 2; mov ecx, 1; xor edx, edx; int 0x80; ret
    code = bytes([0xb8, 0x67, 0x01, 0, 0, 0xbb, 2, 0, 0, 0, 0xb9, 1, 0, 0, 0, 0x31, 0xd2, 0xcd, 0x80, 0xc3])
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    print("i386", call(), flush=True)
