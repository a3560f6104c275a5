<?php
// guzzle.php -- the library part of the PHP stdio adapter: Guzzle 7
// (Debian's php-guzzlehttp-guzzle, 7.4.5) with its retry middleware.
//
// Configuration: Guzzle's documented retry, Middleware::retry($decider,
// $delay) ("Middleware that retries requests based on the boolean result of
// invoking the provided decider function", src/Middleware.php;
// https://docs.guzzlephp.org/en/stable/handlers-and-middleware.html), pushed
// on HandlerStack::create() over the curl multi handler, with the decider
// applications copy (retry a ConnectException, a 5xx or a 429 while fewer
// than max_attempts - 1 retries were made; 5 retries without a budget) and
// no delay function, so RetryMiddleware::exponentialDelay: 1 s, 2 s, 4 s ...
// (2^(retries-1) s, no cap, no jitter). Guzzle never reads Retry-After: the
// default delay function ignores the response it is handed, and nothing else
// in Guzzle looks at the header. It has no wait budget, so max_wait_s is not
// used. A ConnectException is also what curl's "empty reply" (a connection
// closed without an answer, errno 52) and a timeout (28) become, for a POST
// too; a reset (56) or a body cut short (18) is a plain RequestException,
// not retried. Request options: Guzzle's defaults (no timeout, http_errors
// on). The decider is per client, so the adapter keeps one Client per
// distinct attempt budget, all on one CurlMultiHandler (one connection
// cache, one event loop); Guzzle keeps no other state across requests.
//
// Attempts: the request options `progress` (curl's progress callback: its
// first call of an attempt, when curl starts the transfer, prints
// action_sent) and `on_stats` (called when each attempt's transfer ends,
// with its response or its curl error: action_result). Both are handed to
// every attempt, retries included, so the report is live. Below them,
// libcurl itself resends a request whose reused keep-alive connection gave
// no answer ("Connection died, retrying a fresh connect"), a POST too,
// within the same transfer: that attempt is not reported, and
// attempts.hidden counts it.
//
// Concurrency: every task is one requestAsync() on the shared handler; the
// generic loop calls CurlMultiHandler::tick() between non-blocking reads of
// stdin (select_timeout 10 ms, so a task or cancel line waits at most
// ~20 ms). Retry delays are the handler's own: a delayed attempt waits in
// the handler until tick() finds it due.
//
// Cancel: the promise's cancel(), Guzzle's abort. It reaches the transfer in
// flight; once the retry middleware has scheduled a retry, the promise the
// application holds is already resolved with the retry's promise and its
// cancel does not reach it: the delayed retry still goes out (Guzzle
// promises do not forward a cancel to the promise they were resolved with,
// Promise::cancel/settle), and the adapter reports no line after the
// result (a note on stderr instead).
//
// Outcome: a 2xx response; Guzzle's ClientException/ServerException
// (http_errors) carry the 4xx/5xx status; a ConnectException, or a
// RequestException from the handler, is a transport error (with a response
// whose body was cut short: partial).
declare(strict_types=1);

require_once __DIR__ . '/stdio.php';
require_once 'GuzzleHttp/autoload.php';

use GuzzleHttp\Client;
use GuzzleHttp\Exception\BadResponseException;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Exception\RequestException;
use GuzzleHttp\Handler\CurlMultiHandler;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Middleware;
use GuzzleHttp\TransferStats;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

final class GuzzleLib implements Library
{
    private CurlMultiHandler $handler;
    /** @var array<int,Client> */
    private array $clients = [];

    public function __construct()
    {
        $this->handler = new CurlMultiHandler(['select_timeout' => 0.01]);
    }

    public function hello(): array
    {
        $v = trim((string) @shell_exec("dpkg-query -W -f='\${Version}' php-guzzlehttp-guzzle 2>/dev/null"));
        return ['name' => 'guzzle', 'version' => $v !== '' ? $v : Client::MAJOR_VERSION . '.x',
                'adapter' => 'php stdio adapter 1',
                'config' => 'HandlerStack::create(CurlMultiHandler) + Middleware::retry(decider: '
                    . 'ConnectException, 5xx or 429 while retries < max_attempts-1; '
                    . 'delay: RetryMiddleware::exponentialDelay), request options default'];
    }

    /** The decider applications pass to Middleware::retry, allowing $max retries. */
    private static function decider(int $max): callable
    {
        return static function (int $retries, RequestInterface $request, ?ResponseInterface $response = null,
                                $exception = null) use ($max): bool {
            if ($retries >= $max) {
                return false;
            }
            if ($exception instanceof ConnectException) {
                return true;
            }
            if ($response !== null) {
                $s = $response->getStatusCode();
                return $s === 429 || $s >= 500;
            }
            return false;
        };
    }

    private function clientFor(?int $maxAttempts): Client
    {
        $max = $maxAttempts === null ? 5 : max(0, $maxAttempts - 1);
        if (!isset($this->clients[$max])) {
            $stack = HandlerStack::create($this->handler);
            $stack->push(Middleware::retry(self::decider($max)), 'retry');
            $this->clients[$max] = new Client(['handler' => $stack]);
        }
        return $this->clients[$max];
    }

    public function start(Task $t, Reporter $r): void
    {
        $headers = $t->headers;
        if ($t->body !== null && !isset($headers['Content-Type'])) {
            $headers['Content-Type'] = 'application/json';
        }
        $headers['Authorization'] = 'Bearer ' . $t->key();
        $options = [
            'headers' => $headers,
            'progress' => static function () use ($r): void {
                if (!$r->isPending()) {
                    $r->sent();
                }
            },
            'on_stats' => static function (TransferStats $s) use ($r): void {
                if (!$r->isPending()) {
                    $r->sent();
                }
                $resp = $s->getResponse();
                $err = $s->getHandlerErrorData();
                $error = $err === null || $err === 0 ? null
                    : (is_object($err) ? get_class($err) . ': ' . $err->getMessage() : 'cURL error ' . (string) $err);
                if ($resp !== null) {
                    $r->result($resp->getStatusCode(), $resp->getHeaderLine('Retry-After') ?: null, $error);
                } else {
                    $r->result(0, null, $error ?? 'no response');
                }
            },
        ];
        if ($t->body !== null) {
            $options['body'] = $t->body;
        }
        $promise = $this->clientFor($t->maxAttempts)->requestAsync($t->method, $t->url, $options);
        $r->onCancel(static function () use ($promise): void {
            $promise->cancel();
        });
        $promise->then(
            static function (ResponseInterface $resp) use ($r): void {
                $r->finish($resp->getStatusCode(), (string) $resp->getBody(), false, null);
            },
            static function ($e) use ($r): void {
                $msg = $e instanceof \Throwable ? get_class($e) . ': ' . $e->getMessage() : (string) $e;
                if ($e instanceof BadResponseException) {
                    $r->finish($e->getResponse()->getStatusCode(), null, false, $msg);
                } elseif ($e instanceof RequestException && $e->getResponse() !== null) {
                    $r->finish($e->getResponse()->getStatusCode(), null, true, $msg);
                } else {
                    $r->finish(0, null, false, $msg);
                }
            }
        );
    }

    public function tick(): void
    {
        $this->handler->tick();
    }
}

stdio_main(new GuzzleLib());
