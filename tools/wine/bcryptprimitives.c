/*
 * bcryptprimitives.dll for Wine 8: exports ProcessPrng, the only entry point Rust's standard
 * library (1.78 and later) imports from this DLL to seed its random state. Wine 8.0 ships no
 * bcryptprimitives.dll, so every Rust Windows executable fails to load without it.
 *
 * ProcessPrng fills the buffer from the system RNG; here that is advapi32's RtlGenRandom
 * (exported as SystemFunction036), which Wine implements with the host's random source.
 * RtlGenRandom takes a 32-bit length, so large requests are served in chunks.
 *
 * Built by scripts/windows-toolchain.sh and installed into the Wine prefix's system32 by
 * tools/wine/run.sh. Test infrastructure only: never shipped with the agent.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
