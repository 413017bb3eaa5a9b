// A minimal JIT (x86_64) that tells perf about its code the way V8 and other JITs do: a
// jitdump (`jit-PID.dump`, perf's tools/perf/util/jitdump.h layout) mapped executable
// once as the marker `perf inject --jit` looks for, a JIT_CODE_UNWINDING_INFO record with
// the code's `.eh_frame` and `.eh_frame_hdr`, then its JIT_CODE_LOAD.
//
// The generated function keeps no frame pointer (it zeroes rbp), spins, then calls a C
// function: a `--call-graph dwarf` unwinder finds its caller only through the tables.
// The tables are laid out after the code as the jitdump format expects (and as V8 does):
// `.eh_frame` at the code's size rounded up to 8, `.eh_frame_hdr` right after it, with
// pc-relative pointers.
//
// Usage: jit_unwind [MILLISECONDS] (default 600). Writes jit-PID.dump in the current
// directory.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// The C function the JIT code calls (where most samples land).
__attribute__((noinline)) void leaf_work(void) {
    volatile uint64_t x = 0;
    for (int i = 0; i < 20000; i++) x += (uint64_t)i * 7;
}

// jit_spin_and_call(void (*fn)(void)):
static const uint8_t CODE[] = {
    0x55,                          // 0x00 push %rbp
    0x53,                          // 0x01 push %rbx
    0x48, 0x83, 0xec, 0x18,        // 0x02 sub $0x18,%rsp
    0x48, 0x89, 0xfb,              // 0x06 mov %rdi,%rbx
    0x31, 0xed,                    // 0x09 xor %ebp,%ebp: no frame pointer chain
    0xb9, 0x00, 0x00, 0x01, 0x00,  // 0x0b mov $0x10000,%ecx
    0xff, 0xc9,                    // 0x10 dec %ecx
    0x75, 0xfc,                    // 0x12 jne 0x10
    0xff, 0xd3,                    // 0x14 call *%rbx
    0x48, 0x83, 0xc4, 0x18,        // 0x16 add $0x18,%rsp
    0x5b,                          // 0x1a pop %rbx
    0x5d,                          // 0x1b pop %rbp
    0xc3,                          // 0x1c ret
};
#define CODE_SIZE ((uint32_t)sizeof(CODE))
#define EH_FRAME_AT ((CODE_SIZE + 7u) & ~7u)

// .eh_frame: one CIE ("zR", pointers pcrel|sdata4), one FDE, the terminator.
static uint8_t eh_frame[76];
// .eh_frame_hdr: version 1, eh_frame_ptr pcrel|sdata4, count udata4, table datarel|sdata4.
static uint8_t eh_frame_hdr[20];

static void put32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }

static void build_tables(void) {
    static const uint8_t cie[24] = {
        20, 0, 0, 0,        // length
        0, 0, 0, 0,         // CIE id
        1,                  // version
        'z', 'R', 0,        // augmentation
        0x01,               // code alignment 1
        0x78,               // data alignment -8
        0x10,               // return address: r16 (rip)
        0x01, 0x1b,         // augmentation data: FDE pointers pcrel|sdata4
        0x0c, 0x07, 0x08,   // def_cfa rsp+8
        0x90, 0x01,         // offset r16 at cfa-8
        0x00, 0x00,         // nops
    };
    static const uint8_t fde_cfa[24] = {
        0x41, 0x0e, 0x10, 0x86, 0x02,  // @1: cfa rsp+16, rbp at cfa-16
        0x41, 0x0e, 0x18, 0x83, 0x03,  // @2: cfa rsp+24, rbx at cfa-24
        0x44, 0x0e, 0x30,              // @6: cfa rsp+48
        0x54, 0x0e, 0x18,              // @0x1a: cfa rsp+24
        0x41, 0x0e, 0x10, 0xc3,        // @0x1b: cfa rsp+16, rbx restored
        0x41, 0x0e, 0x08, 0xc6,        // @0x1c: cfa rsp+8, rbp restored
    };
    uint8_t *p = eh_frame;
    memcpy(p, cie, sizeof cie);
    uint8_t *fde = p + 24;
    put32(fde, 44);                     // length
    put32(fde + 4, 24 + 4);             // back to the CIE, from this field
    // pc_begin: the code, from this field (the code is EH_FRAME_AT bytes before .eh_frame).
    put32(fde + 8, -(int32_t)(EH_FRAME_AT + 24 + 8));
    put32(fde + 12, (int32_t)CODE_SIZE);  // pc_range
    fde[16] = 0;                        // augmentation data length
    memcpy(fde + 17, fde_cfa, sizeof fde_cfa);
    memset(fde + 17 + sizeof fde_cfa, 0, 48 - 17 - sizeof fde_cfa);  // nops
    put32(p + 72, 0);                   // terminator

    uint8_t *h = eh_frame_hdr;
    h[0] = 1; h[1] = 0x1b; h[2] = 0x03; h[3] = 0x3b;
    put32(h + 4, -(int32_t)(sizeof eh_frame + 4));     // .eh_frame, from this field
    put32(h + 8, 1);                                   // one FDE
    put32(h + 12, -(int32_t)(EH_FRAME_AT + sizeof eh_frame));  // the code, from .eh_frame_hdr
    put32(h + 16, 24 - (int32_t)sizeof eh_frame);              // the FDE, from .eh_frame_hdr
}

static void put(FILE *f, const void *p, size_t n) {
    if (fwrite(p, 1, n, f) != n) { perror("jitdump"); exit(1); }
}

static void prefix(FILE *f, uint32_t id, uint32_t total) {
    uint64_t t = now_ns();
    put(f, &id, 4); put(f, &total, 4); put(f, &t, 8);
}

// Runs the JIT code for `ms` milliseconds.
__attribute__((noinline)) uint64_t run(void (*jit)(void (*)(void)), unsigned ms) {
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull, calls = 0;
    while (now_ns() < end) {
        jit(leaf_work);
        calls++;
    }
    return calls;
}

int main(int argc, char **argv) {
    unsigned ms = argc > 1 ? (unsigned)atoi(argv[1]) : 600;
    build_tables();
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) { perror("mmap"); return 1; }
    memcpy(mem, CODE, CODE_SIZE);
    memcpy(mem + EH_FRAME_AT, eh_frame, sizeof eh_frame);
    memcpy(mem + EH_FRAME_AT + sizeof eh_frame, eh_frame_hdr, sizeof eh_frame_hdr);
    if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC)) { perror("mprotect"); return 1; }

    char name[64];
    snprintf(name, sizeof name, "jit-%d.dump", getpid());
    int fd = open(name, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0) { perror(name); return 1; }
    FILE *f = fdopen(fd, "w+");
    // The header: magic "JiTD", version 1, its size, EM_X86_64, pad, pid, time, flags.
    uint32_t h32[6] = {0x4A695444, 1, 40, 62, 0, (uint32_t)getpid()};
    uint64_t h64[2] = {now_ns(), 0};
    put(f, h32, sizeof h32); put(f, h64, sizeof h64);
    fflush(f);
    // The marker: perf records this map, and `perf inject --jit` (or perfdata) finds the
    // file by it.
    void *marker = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    if (marker == MAP_FAILED) { perror("marker mmap"); return 1; }

    // JIT_CODE_UNWINDING_INFO: .eh_frame then .eh_frame_hdr, mapped after the code.
    uint64_t tables = sizeof eh_frame + sizeof eh_frame_hdr;
    prefix(f, 4, (uint32_t)(16 + 24 + tables));
    uint64_t u[3] = {tables, sizeof eh_frame_hdr, tables};
    put(f, u, sizeof u);
    put(f, eh_frame, sizeof eh_frame); put(f, eh_frame_hdr, sizeof eh_frame_hdr);
    // JIT_CODE_LOAD.
    static const char fn[] = "jit_spin_and_call";
    prefix(f, 0, (uint32_t)(16 + 40 + sizeof fn + CODE_SIZE));
    uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
    uint64_t load[4] = {(uint64_t)(uintptr_t)mem, (uint64_t)(uintptr_t)mem, CODE_SIZE, 0};
    put(f, ids, sizeof ids); put(f, load, sizeof load);
    put(f, fn, sizeof fn); put(f, mem, CODE_SIZE);
    fflush(f);

    uint64_t calls = run((void (*)(void (*)(void)))mem, ms);
    printf("%llu calls\n", (unsigned long long)calls);
    munmap(marker, (size_t)page);
    fclose(f);
    return 0;
}
