/* dwarf-signal: a signal handler that does work (its samples' stacks go through the
 * signal frame, libc's __restore_rt, into the code it interrupted) and clock_gettime in
 * the vdso (unwound with the vdso image perf saves in its build-id cache). Built without
 * frame pointers. clock_gettime is called through a pointer taken once, so the hot path
 * has no PLT stub (perf 6.1 names a sample in a PLT stub after the symbol before it).
 * Deterministic amounts of work; the timer decides which function is interrupted. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;
static int (*volatile get_time)(clockid_t, struct timespec *) = clock_gettime;

__attribute__((noipa)) void in_handler(int n)
{
    for (int i = 0; i < n; i++)
        sink += (unsigned long)i * 7;
}

__attribute__((noipa)) void on_alarm(int sig)
{
    (void)sig;
    in_handler(150000);
    sink++;
}

__attribute__((noipa)) void compute(int n)
{
    for (int i = 0; i < n; i++)
        sink ^= (unsigned long)i * 13;
}

__attribute__((noipa)) void read_clock(int n)
{
    struct timespec ts;
    for (int i = 0; i < n; i++) {
        get_time(CLOCK_MONOTONIC, &ts);
        sink += (unsigned long)ts.tv_nsec;
    }
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, 0);
    /* Every 5 ms of CPU time (ITIMER_PROF would be as good; REAL is what people use). */
    struct itimerval it = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_REAL, &it, 0);
    for (int r = 0; r < 30; r++) {
        compute(3000000);
        read_clock(150000);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, 0);
    return 0;
}
