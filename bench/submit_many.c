/* submit_many: submit many batch jobs through libslurm, one RPC each, from
 * THREADS threads (default 4), without a process per job as sbatch needs.
 * The large Slurm benchmark (bench/slurm_bench.py --scale) queues 50,000 jobs
 * with it; sbatch managed ~30-50 a second on this 2-core machine.
 *
 * Input, one job a line on stdin (blank lines ignored):
 *   UID GID LIMIT_MIN NODES NTASKS CPUS_PER_TASK NTASKS_PER_NODE EXCLUSIVE SLEEP_S NAME
 * (NODES, NTASKS, NTASKS_PER_NODE 0 = not set; EXCLUSIVE 0/1). Output: one
 * line per input line, in input order: the job id. Bad input: file line and
 * field on stderr, exit 2, nothing submitted. A failed submission (after 5
 * tries of errors that may pass): its line and Slurm's error on stderr,
 * exit 1. Run as root (jobs of other users); SLURM_CONF names the cluster.
 *
 * Build: cc -O2 -pthread submit_many.c -lslurm (-I, -L of the Slurm in use). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

struct spec {
  unsigned uid, gid, limit, nodes, ntasks, cpt, tpn, excl, sleep_s;
  char name[64];
  unsigned long job_id;
};

static struct spec *specs;
static size_t nspecs, next_spec;
static int failed;
static const char *work_dir = "/tmp";
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int submit(struct spec *s) {
  job_desc_msg_t d;
  submit_response_msg_t *resp = NULL;
  char script[128];
  char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
  slurm_init_job_desc_msg(&d);
  snprintf(script, sizeof script, "#!/bin/sh\nexec sleep %u\n", s->sleep_s);
  d.script = script;
  d.name = s->name;
  d.user_id = s->uid;
  d.group_id = s->gid;
  d.time_limit = s->limit;
  d.work_dir = (char *)work_dir;
  d.std_out = "/dev/null";
  d.std_err = "/dev/null";
  d.environment = env;
  d.env_size = 1;
  if (s->nodes) d.min_nodes = d.max_nodes = s->nodes;
  if (s->ntasks) d.num_tasks = s->ntasks;
  if (s->cpt) d.cpus_per_task = (uint16_t)s->cpt;
  if (s->tpn) d.ntasks_per_node = (uint16_t)s->tpn;
  if (s->ntasks && s->cpt) d.min_cpus = s->ntasks * s->cpt;
  if (s->excl) d.shared = JOB_SHARED_NONE;
  for (int attempt = 0; attempt < 5; attempt++) {
    if (slurm_submit_batch_job(&d, &resp) == SLURM_SUCCESS) {
      s->job_id = resp->job_id;
      slurm_free_submit_response_response_msg(resp);
      return 0;
    }
    int e = slurm_get_errno();
    if (e != EAGAIN && e != ESLURM_ERROR_ON_DESC_TO_RECORD_COPY &&
        e != SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT && e != ESLURM_NODES_BUSY &&
        e != SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR && e != SLURM_COMMUNICATIONS_CONNECTION_ERROR)
      break;
    usleep(200000 * (attempt + 1));
  }
  return slurm_get_errno();
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&mu);
    size_t i = next_spec++;
    int stop = failed;
    pthread_mutex_unlock(&mu);
    if (i >= nspecs || stop) return NULL;
    int e = submit(&specs[i]);
    if (e) {
      pthread_mutex_lock(&mu);
      fprintf(stderr, "submit_many: stdin line %zu: %s\n", i + 1, slurm_strerror(e));
      failed = 1;
      pthread_mutex_unlock(&mu);
    }
  }
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  if (argc > 2) work_dir = argv[2];
  if (threads < 1 || threads > 64) {
    fprintf(stderr, "usage: submit_many [THREADS 1-64] [WORKDIR] < jobs\n");
    return 2;
  }
  char line[512];
  size_t cap = 0, lineno = 0;
  while (fgets(line, sizeof line, stdin)) {
    ++lineno;
    if (line[strspn(line, " \t\r\n")] == '\0') continue;
    if (nspecs == cap) {
      cap = cap ? 2 * cap : 1024;
      specs = realloc(specs, cap * sizeof *specs);
      if (!specs) { perror("submit_many"); return 1; }
    }
    struct spec *s = &specs[nspecs];
    memset(s, 0, sizeof *s);
    int n = sscanf(line, "%u %u %u %u %u %u %u %u %u %63s", &s->uid, &s->gid, &s->limit,
                   &s->nodes, &s->ntasks, &s->cpt, &s->tpn, &s->excl, &s->sleep_s, s->name);
    if (n != 10 || s->limit == 0 || s->excl > 1) {
      fprintf(stderr, "submit_many: stdin line %zu: field %d: expected UID GID LIMIT_MIN NODES "
              "NTASKS CPUS_PER_TASK NTASKS_PER_NODE EXCLUSIVE(0/1) SLEEP_S NAME\n",
              lineno, n < 10 ? n + 1 : 3);
      return 2;
    }
    ++nspecs;
  }
  slurm_init(NULL);
  pthread_t t[64];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  for (size_t i = 0; i < nspecs && specs[i].job_id; i++) printf("%lu\n", specs[i].job_id);
  slurm_fini();
  return failed ? 1 : 0;
}
