/*
 * _fastbpe_threads.h: a team of threads that runs one job on every partition at once.
 *
 * team_run(team, job, arg, parallel) calls job(arg, t) for every partition t: partition 0 on the calling thread,
 * partition t on helper thread t; it returns when all are done.  With ``parallel`` 0, or where there are no
 * threads (no pthreads: BPEPROOF_NO_THREADS, or a platform without them), the calling thread runs them all in
 * turn.  A job only touches its own partition, so both ways give the same memory afterwards.
 *
 * The helpers wait on a condition variable between jobs, with every signal blocked (Ctrl-C reaches the thread
 * that runs Python, which checks for it between steps).
 */

#ifndef BPEPROOF_FASTBPE_THREADS_H
#define BPEPROOF_FASTBPE_THREADS_H

#if !defined(BPEPROOF_NO_THREADS) && (defined(__unix__) || defined(__APPLE__))
#define BPEPROOF_THREADS 1
#include <pthread.h>
#include <signal.h>
#include <time.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*TeamJob)(void *arg, int part);

/* Turns a waiting thread spins before it sleeps: some tens of microseconds. */
#define SPIN_LIMIT 2000

typedef struct Team Team;

#ifdef BPEPROOF_THREADS
typedef struct {
    Team *team;
    int part;
} Helper;
#endif

struct Team {
    int parts;
    int helpers; /* helper threads running: helper k runs partition k + 1 */
    TeamJob job;
    void *arg;
#ifdef BPEPROOF_THREADS
    pthread_t *threads;
    Helper *helper;
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t generation; /* one more for each job handed out (written under the lock, read by spinning helpers) */
    uint64_t pending;    /* helpers still running the current job */
    uint64_t sleeping;   /* helpers asleep on ``go`` (they stopped spinning) */
    int stopping;
#endif
};

/* Whether helper threads can be started here at all. */
static int team_threads_available(void)
{
#ifdef BPEPROOF_THREADS
    return 1;
#else
    return 0;
#endif
}

#ifdef BPEPROOF_THREADS
#if defined(__x86_64__) || defined(__i386__)
#define SPIN_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define SPIN_PAUSE() __asm__ __volatile__("yield")
#else
#define SPIN_PAUSE() ((void)0)
#endif

/* Whether *value differs from ``from`` within a short spin: during the merges a job is handed out every few
 * microseconds, and waking a sleeping thread costs more than that. */
static int spin_until_changed(const uint64_t *value, uint64_t from)
{
    for (int spin = 0; spin < SPIN_LIMIT; spin++) {
        if (__atomic_load_n(value, __ATOMIC_ACQUIRE) != from)
            return 1;
        SPIN_PAUSE();
    }
    return 0;
}

/* Whether *value is 0 within a short spin. */
static int spin_until_zero(const uint64_t *value)
{
    for (int spin = 0; spin < SPIN_LIMIT; spin++) {
        if (__atomic_load_n(value, __ATOMIC_ACQUIRE) == 0)
            return 1;
        SPIN_PAUSE();
    }
    return 0;
}

static void *team_helper(void *raw)
{
    Helper *self = raw;
    Team *team = self->team;
    uint64_t seen = 0;
    for (;;) {
        if (!spin_until_changed(&team->generation, seen)) {
            pthread_mutex_lock(&team->lock);
            __atomic_add_fetch(&team->sleeping, 1, __ATOMIC_ACQ_REL);
            while (__atomic_load_n(&team->generation, __ATOMIC_ACQUIRE) == seen && !team->stopping)
                pthread_cond_wait(&team->go, &team->lock);
            __atomic_sub_fetch(&team->sleeping, 1, __ATOMIC_ACQ_REL);
            pthread_mutex_unlock(&team->lock);
        }
        if (__atomic_load_n(&team->stopping, __ATOMIC_ACQUIRE))
            return NULL;
        seen = __atomic_load_n(&team->generation, __ATOMIC_ACQUIRE);
        team->job(team->arg, self->part);
        if (__atomic_sub_fetch(&team->pending, 1, __ATOMIC_ACQ_REL) == 0) {
            pthread_mutex_lock(&team->lock);
            pthread_cond_signal(&team->done);
            pthread_mutex_unlock(&team->lock);
        }
    }
}
#endif

static void team_stop(Team *team);

/* A team for ``parts`` partitions; 0, or an errno value when a thread could not be started (none is left). */
static int team_start(Team *team, int parts)
{
    memset(team, 0, sizeof *team);
    team->parts = parts;
#ifdef BPEPROOF_THREADS
    if (parts < 2)
        return 0;
    team->threads = malloc((size_t)(parts - 1) * sizeof(pthread_t));
    team->helper = malloc((size_t)(parts - 1) * sizeof(Helper));
    if (!team->threads || !team->helper) {
        free(team->threads);
        free(team->helper);
        team->threads = NULL;
        team->helper = NULL;
        return ENOMEM;
    }
    pthread_mutex_init(&team->lock, NULL);
    pthread_cond_init(&team->go, NULL);
    pthread_cond_init(&team->done, NULL);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int error = 0;
    for (int k = 0; k < parts - 1; k++) {
        team->helper[k].team = team;
        team->helper[k].part = k + 1;
        error = pthread_create(&team->threads[k], NULL, team_helper, &team->helper[k]);
        if (error)
            break;
        team->helpers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (error) {
        team_stop(team);
        return error;
    }
#endif
    return 0;
}

#ifdef BPEPROOF_THREADS
static double team_clock(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}
#endif

/* job(arg, t) for every partition t, on the helpers when ``parallel`` (else here, in turn).  Returns 1 when the
 * helpers ran late: none had to be woken up, yet this thread, done with its own partition, waited for them longer
 * than its partition took and had to sleep (their cores were busy with other work; an uneven split of one step's
 * positions is not late). */
static int team_run(Team *team, TeamJob job, void *arg, int parallel)
{
#ifdef BPEPROOF_THREADS
    if (parallel && team->helpers) {
        pthread_mutex_lock(&team->lock);
        int woken = __atomic_load_n(&team->sleeping, __ATOMIC_ACQUIRE) != 0; /* under the lock: they are asleep */
        team->job = job;
        team->arg = arg;
        __atomic_store_n(&team->pending, (uint64_t)team->helpers, __ATOMIC_RELAXED);
        __atomic_store_n(&team->generation, team->generation + 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&team->go);
        pthread_mutex_unlock(&team->lock);
        double started = team_clock();
        job(arg, 0);
        for (int t = team->helpers + 1; t < team->parts; t++)
            job(arg, t);
        double own = team_clock();
        if (spin_until_zero(&team->pending))
            return 0;
        pthread_mutex_lock(&team->lock);
        while (__atomic_load_n(&team->pending, __ATOMIC_ACQUIRE) != 0)
            pthread_cond_wait(&team->done, &team->lock);
        pthread_mutex_unlock(&team->lock);
        return !woken && team_clock() - own > own - started;
    }
#else
    (void)parallel;
#endif
    for (int t = 0; t < team->parts; t++)
        job(arg, t);
    return 0;
}

/* Stop and join every helper. */
static void team_stop(Team *team)
{
#ifdef BPEPROOF_THREADS
    if (!team->threads)
        return;
    pthread_mutex_lock(&team->lock);
    __atomic_store_n(&team->stopping, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&team->generation, team->generation + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&team->go);
    pthread_mutex_unlock(&team->lock);
    for (int k = 0; k < team->helpers; k++)
        pthread_join(team->threads[k], NULL);
    pthread_mutex_destroy(&team->lock);
    pthread_cond_destroy(&team->go);
    pthread_cond_destroy(&team->done);
    free(team->threads);
    free(team->helper);
    team->threads = NULL;
    team->helper = NULL;
    team->helpers = 0;
#endif
}

#ifdef BPEPROOF_THREADS
typedef struct {
    void (*fn)(void *);
    void *arg;
} Later;

static void *team_later_main(void *raw)
{
    Later later = *(Later *)raw;
    free(raw);
    later.fn(later.arg);
    return NULL;
}
#endif

/* fn(arg) on a thread of its own that nobody waits for (the caller goes on at once; a process that ends meanwhile
 * ends it too); here and now where there are no threads or one cannot start. */
static void team_later(void (*fn)(void *), void *arg)
{
#ifdef BPEPROOF_THREADS
    Later *later = malloc(sizeof *later);
    pthread_attr_t attr;
    if (later && pthread_attr_init(&attr) == 0) {
        later->fn = fn;
        later->arg = arg;
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        pthread_t thread;
        int error = pthread_create(&thread, &attr, team_later_main, later);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        if (!error)
            return;
    }
    free(later);
#endif
    fn(arg);
}

#endif /* BPEPROOF_FASTBPE_THREADS_H */
