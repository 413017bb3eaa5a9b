/* The workloads of the perf sched scenarios, one per executable name (argv[0]):
 *   sched_pingpong  two threads handing a mutex and a condition variable back and forth
 *   sched_pipe      a producer process writing messages into a pipe, a consumer reading
 *   sched_threads   50 short-lived threads, created and joined one after the other
 *   sched_pinned    a task pinned to CPU 0 (as taskset does), then moved to CPU 1
 *   sched_sleep     sleeping: usleep and nanosleep in a loop
 * Each runs ~0.1-0.3 s, mostly off the CPU: a few thousand switches. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn;
enum { ROUNDS = 500 };

__attribute__((noinline)) static void take_turn(int me) {
    pthread_mutex_lock(&lock);
    while (turn != me) pthread_cond_wait(&cond, &lock);
    turn = !me;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

static void *pong(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) take_turn(1);
    return NULL;
}

static int pingpong(void) {
    pthread_t t;
    pthread_create(&t, NULL, pong, NULL);
    for (int i = 0; i < ROUNDS; i++) take_turn(0);
    pthread_join(t, NULL);
    return 0;
}

__attribute__((noinline)) static void produce(int fd, int i) {
    char msg[64];
    int n = snprintf(msg, sizeof msg, "message %d\n", i);
    if (write(fd, msg, (size_t)n) != n) perror("write");
    if (i % 16 == 0) usleep(200);
}

__attribute__((noinline)) static long consume(int fd) {
    char buf[256];
    long total = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) total += n;
    return total;
}

static int pipe_pair(void) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid_t child = fork();
    if (child == 0) {
        close(fds[1]);
        consume(fds[0]);
        _exit(0);
    }
    close(fds[0]);
    for (int i = 0; i < 1000; i++) produce(fds[1], i);
    close(fds[1]);
    waitpid(child, NULL, 0);
    return 0;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(long ns) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        for (int i = 0; i < 1000; i++) sink += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static void *short_lived(void *arg) {
    (void)arg;
    spin(200000);
    return NULL;
}

static int threads(void) {
    for (int i = 0; i < 50; i++) {
        pthread_t t;
        pthread_create(&t, NULL, short_lived, NULL);
        pthread_join(t, NULL);
    }
    return 0;
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity");
}

static int pinned(void) {
    pin(0);
    for (int i = 0; i < 10; i++) {
        spin(2000000);
        usleep(1000);
    }
    /* Moved: the kernel migrates the task to CPU 1. */
    pin(1);
    for (int i = 0; i < 10; i++) {
        spin(2000000);
        usleep(1000);
    }
    return 0;
}

static int sleeper(void) {
    for (int i = 0; i < 40; i++) {
        usleep(500);
        struct timespec t = {0, 1000000L};
        nanosleep(&t, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    (void)argc;
    const char *name = strrchr(argv[0], '/');
    name = name ? name + 1 : argv[0];
    if (!strcmp(name, "sched_pingpong")) return pingpong();
    if (!strcmp(name, "sched_pipe")) return pipe_pair();
    if (!strcmp(name, "sched_threads")) return threads();
    if (!strcmp(name, "sched_pinned")) return pinned();
    if (!strcmp(name, "sched_sleep")) return sleeper();
    /* Any other name (the build check runs it under its file's name): all of them. */
    return pingpong() | pipe_pair() | threads() | sleeper();
}
