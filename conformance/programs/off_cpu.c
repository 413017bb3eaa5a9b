/* Off the CPU in three ways, for the off-CPU scenario: sleeping (nanosleep), blocked
 * reading a pipe a second thread writes to late, and waiting for a mutex the other
 * thread holds. Each wait is ~10 ms, 8 times each: ~0.25 s in all, little CPU. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;

static void pause_ms(int ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

__attribute__((noinline)) static void sleeper(void) { pause_ms(10); }

__attribute__((noinline)) static void pipe_reader(void) {
    char c;
    if (read(fds[0], &c, 1) != 1) perror("read");
}

__attribute__((noinline)) static void lock_waiter(void) {
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
}

static void *helper(void *arg) {
    (void)arg;
    for (int i = 0; i < 8; i++) {
        /* The pipe: write after 10 ms, while main is blocked reading. */
        pthread_barrier_wait(&barrier);
        pause_ms(10);
        if (write(fds[1], "x", 1) != 1) perror("write");
        /* The mutex: hold it 10 ms while main waits for it. */
        pthread_mutex_lock(&lock);
        pthread_barrier_wait(&barrier);
        pause_ms(10);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void) {
    pthread_t t;
    if (pipe(fds) != 0) return 1;
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_create(&t, NULL, helper, NULL);
    for (int i = 0; i < 8; i++) {
        sleeper();
        pthread_barrier_wait(&barrier);
        pipe_reader();
        pthread_barrier_wait(&barrier);
        lock_waiter();
    }
    pthread_join(t, NULL);
    return 0;
}
