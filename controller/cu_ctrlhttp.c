/*
 * cu_ctrlhttp.c - see cu_ctrlhttp.h. A connection reads one request head
 * (at most 4 KiB, 5 s), asks the handler, writes the response as the
 * socket accepts it (EV_WRITE), and closes. Bodies are capped at 64 MiB.
 */
#include "cu_ctrlhttp.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct hconn {
    cu_httpd *s;
    int fd;
    ev_io io;
    ev_timer timeout;
    size_t len;
    char buf[4096];
    char *out;          /* response, malloc'd */
    size_t outlen, sent;
    struct hconn *next;
} hconn;

struct cu_httpd {
    struct ev_loop *loop;
    int fd;
    ev_io io;
    hconn *conns;
    cu_httpd_handler h;
    void *ud;
};

static void conn_close(hconn *h)
{
    cu_httpd *s = h->s;
    ev_io_stop(s->loop, &h->io);
    ev_timer_stop(s->loop, &h->timeout);
    close(h->fd);
    for (hconn **pp = &s->conns; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    free(h->out);
    free(h);
}

static const char *reason_of(int code)
{
    switch (code) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

static void conn_write(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    hconn *h = w->data;
    while (h->sent < h->outlen) {
        ssize_t n = send(h->fd, h->out + h->sent, h->outlen - h->sent, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (n <= 0)
            break;
        h->sent += (size_t)n;
    }
    conn_close(h);
}

static void conn_respond(hconn *h)
{
    char method[8] = "", target[1024] = "", accept[256] = "";
    h->buf[h->len] = 0;
    cu_buf body;
    cu_buf_init(&body, 64u << 20);
    const char *ctype = "text/plain; charset=utf-8";
    int code;
    if (sscanf(h->buf, "%7s %1023s", method, target) != 2) {
        code = 400;
        cu_buf_puts(&body, "bad request\n");
    } else if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        code = 405;
        cu_buf_puts(&body, "only GET and HEAD\n");
    } else {
        const char *a = NULL;
        for (const char *p = h->buf; (p = strchr(p, '\n')) != NULL && !a; p++)
            if (strncasecmp(p + 1, "accept:", 7) == 0)
                a = p;
        if (a) {
            a += 8;
            while (*a == ' ')
                a++;
            size_t n = strcspn(a, "\r\n");
            if (n >= sizeof(accept))
                n = sizeof(accept) - 1;
            memcpy(accept, a, n);
            accept[n] = 0;
        }
        char *q = strchr(target, '?');
        if (q)
            *q++ = 0;
        code = h->s->h(h->s->ud, target, q ? q : "", accept, &body, &ctype);
    }
    const char *b = cu_buf_str(&body);
    size_t blen = body.len;
    int head = strcmp(method, "HEAD") == 0;
    char hdr[512];
    int hn = snprintf(hdr, sizeof(hdr),
                      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n",
                      code, reason_of(code), ctype, blen);
    size_t total = (size_t)hn + (head ? 0 : blen);
    h->out = malloc(total ? total : 1);
    if (!h->out || hn <= 0) {
        cu_buf_free(&body);
        conn_close(h);
        return;
    }
    memcpy(h->out, hdr, (size_t)hn);
    if (!head && blen)
        memcpy(h->out + hn, b, blen);
    h->outlen = total;
    cu_buf_free(&body);
    ev_io_stop(h->s->loop, &h->io);
    ev_io_init(&h->io, conn_write, h->fd, EV_WRITE);
    h->io.data = h;
    ev_io_start(h->s->loop, &h->io);
}

static void conn_read(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    hconn *h = w->data;
    ssize_t r = recv(h->fd, h->buf + h->len, sizeof(h->buf) - 1 - h->len, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (r <= 0) {
        conn_close(h);
        return;
    }
    h->len += (size_t)r;
    h->buf[h->len] = 0;
    if (strstr(h->buf, "\r\n\r\n") || strstr(h->buf, "\n\n") || h->len >= sizeof(h->buf) - 1)
        conn_respond(h);
}

static void conn_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    conn_close(t->data);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    cu_httpd *s = w->data;
    for (;;) {
        int fd = accept(s->fd, NULL, NULL);
        if (fd < 0)
            return;
        hconn *h = calloc(1, sizeof(*h));
        if (!h || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
            free(h);
            close(fd);
            continue;
        }
        h->s = s;
        h->fd = fd;
        h->next = s->conns;
        s->conns = h;
        ev_io_init(&h->io, conn_read, fd, EV_READ);
        h->io.data = h;
        ev_io_start(loop, &h->io);
        ev_timer_init(&h->timeout, conn_timeout, 5.0, 0.);
        h->timeout.data = h;
        ev_timer_start(loop, &h->timeout);
    }
}

cu_httpd *cu_httpd_start(struct ev_loop *loop, const char *addr, const char *what,
                         cu_httpd_handler hnd, void *ud, char *err, size_t errn, int *port_out)
{
    char host[256], port[32];
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    if (!colon || !colon[1] || hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port)) {
        snprintf(err, errn, "%s %s: expected HOST:PORT, :PORT or \"0\"", what, addr);
        return NULL;
    }
    memcpy(host, addr, hl);
    host[hl] = 0;
    snprintf(port, sizeof(port), "%s", colon + 1);
    char *hp = host;
    if (hp[0] == '[' && hl >= 2 && hp[hl - 1] == ']') {
        hp[hl - 1] = 0;
        hp++;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int e = getaddrinfo(*hp ? hp : NULL, port, &hints, &res);
    if (e != 0) {
        snprintf(err, errn, "%s %s: %s", what, addr, gai_strerror(e));
        return NULL;
    }
    int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol), one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        snprintf(err, errn, "%s %s: %s", what, addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return NULL;
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char nh[256] = "?", np[32] = "0";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, nh, sizeof(nh), np, sizeof(np),
                    NI_NUMERICHOST | NI_NUMERICSERV);
    cu_httpd *s = calloc(1, sizeof(*s));
    if (!s) {
        close(fd);
        snprintf(err, errn, "%s %s: out of memory", what, addr);
        return NULL;
    }
    s->loop = loop;
    s->fd = fd;
    s->h = hnd;
    s->ud = ud;
    if (port_out)
        *port_out = atoi(np);
    ev_io_init(&s->io, on_accept, fd, EV_READ);
    s->io.data = s;
    ev_io_start(loop, &s->io);
    return s;
}

void cu_httpd_stop(cu_httpd *s)
{
    if (!s)
        return;
    while (s->conns)
        conn_close(s->conns);
    ev_io_stop(s->loop, &s->io);
    close(s->fd);
    free(s);
}
